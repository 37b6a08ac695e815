// Draws the answers about the edit: diagnostics, the Decision and its explanations, the tests.

import { $, element } from "./dom.js";
import { jumpTo, renderGutter, showFile } from "./editor.js";
import { state } from "./state.js";

/**
 * The check's diagnostics, each marking its line and jumping to it when clicked. Save is possible
 * once the check of the latest edit (`generation`) is drawn.
 */
export function renderDiagnostics(answer, generation) {
  const list = $("diagnostics");
  list.replaceChildren();
  state.checked = generation === state.generation;
  state.marks = {};
  if (answer.error) {
    state.errors = 1;
    list.append(element("li", "error", answer.error));
    renderGutter();
    return;
  }
  const check = answer.check;
  state.errors = check.summary.errors;
  for (const file of check.files) {
    for (const diagnostic of file.diagnostics) {
      const item = element("li", diagnostic.severity, diagnostic.description);
      item.dataset.kind = diagnostic.kind;
      item.dataset.file = diagnostic.file || file.path;
      const name = (diagnostic.file || "").split("/").pop();
      if (diagnostic.line !== null) {
        item.dataset.line = String(diagnostic.line);
        const marks = state.marks[name] || (state.marks[name] = {});
        if (marks[diagnostic.line] !== "error") marks[diagnostic.line] = diagnostic.severity;
      }
      item.addEventListener("click", () => {
        if (diagnostic.line === null || !state.files.includes(name)) return;
        if (name !== state.current) showFile(name);
        jumpTo(diagnostic.line, diagnostic.column);
      });
      list.append(item);
    }
  }
  if (list.children.length === 0) {
    const summary = check.summary;
    list.append(element("li", "ok",
      `No errors or warnings in ${summary.policies} policies and ${summary.testFiles} test files; ` +
      `${summary.invariantsHolding} of ${summary.invariants} invariants hold.`));
  }
  // Why a policy's rules were not looked at for rules that never matter: a note, not a finding.
  for (const file of check.files.filter((each) => each.ruleAnalysisSkipped)) {
    list.append(element("li", "note", `${file.path}: rules not analysed: ${file.ruleAnalysisSkipped}`));
  }
  renderGutter();
}

/** The Decision: each group's capabilities (click one to explain it), denials and memberships. */
export function renderDecision(answer) {
  const box = $("decision");
  box.replaceChildren();
  if (answer.error) {
    box.append(element("div", "error-line", answer.error));
    return;
  }
  const decision = answer.decision;
  const whyNot = $("why-not-capability");
  const chosen = whyNot.value;
  whyNot.replaceChildren();
  for (const capability of answer.capabilities) {
    const option = element("option", "", capability.name);
    option.value = capability.name;
    whyNot.append(option);
  }
  if (answer.capabilities.some((capability) => capability.name === chosen)) whyNot.value = chosen;
  box.append(element("div", "muted",
    decision.capabilities.length === 0 ? "No capabilities." : `Capabilities: ${decision.capabilities.join(", ")}`));
  for (const group of decision.groups) {
    const card = element("div", "group");
    card.dataset.groupId = group.groupId;
    card.append(element("div", "group-title", `${group.groupType} group ${group.groupId}`));
    if (group.capabilities.length === 0) card.append(element("div", "muted", "no capabilities"));
    for (const name of group.capabilities) {
      const line = element("div");
      const button = element("button", "capability", name);
      button.dataset.capability = name;
      button.dataset.groupId = group.groupId;
      // The page explains it (main.js): the same route, one request at a time.
      button.addEventListener("click", () => box.dispatchEvent(new CustomEvent("explain", {
        detail: { capability: name, groupId: group.groupId },
      })));
      line.append(button);
      const rules = [...new Set(decision.grants
        .filter((grant) => grant.groupId === group.groupId && grant.capability === name)
        .map((grant) => grant.rule))];
      line.append(element("span", "rules", rules.length ? `by ${rules.join(", ")}` : ""));
      card.append(line);
    }
    for (const denial of decision.denials.filter((each) => each.groupId === group.groupId)) {
      card.append(element("div", "denied", `${denial.capability} denied by ${denial.rule}`));
    }
    box.append(card);
  }
  for (const membership of decision.workspaces) {
    box.append(element("div", "workspace",
      `Workspace ${membership.workspace}: ${membership.role} (group ${membership.groupId})`));
  }
  for (const note of decision.notes) box.append(element("div", "muted", note));
}

/** The explanation request of the capability last clicked, or `null` before any. */
export function explanationRequest() {
  if (!state.explained) return null;
  const extra = { capability: state.explained.capability };
  if (state.explained.groupId) extra.group = state.explained.groupId;
  state.explaining = state.explained;
  return extra;
}

/** Shows the explanation, unless the author has clicked another capability since it was asked. */
export function renderExplanation(answer) {
  if (state.explaining !== state.explained) return;
  const box = $("explanation");
  box.classList.remove("muted");
  box.textContent = answer.error ? answer.error : answer.text;
  box.dataset.capability = state.explained.capability;
}

/** The tests' results: the totals, each failing case with its failures, and the coverage. */
export function renderTests(answer) {
  const box = $("tests");
  box.replaceChildren();
  if (answer.error) {
    box.append(element("div", "error-line", answer.error));
    return;
  }
  const tests = answer.tests;
  box.append(element("div", tests.failed === 0 ? "pass" : "fail", `${tests.passed} passed, ${tests.failed} failed`));
  // The test "add test" added last, as the run found it.
  const pinned = state.pinned && tests.files
    .filter((file) => file.path.split("/").pop() === state.pinned.file)
    .flatMap((file) => file.cases)
    .find((testCase) => testCase.name === state.pinned.name);
  if (pinned) {
    const line = element("div", pinned.passed ? "pass" : "fail",
      `${pinned.passed ? "passes" : "fails"}: the added test at line ${pinned.line}: ${pinned.name}`);
    line.dataset.testid = "pinned-test";
    box.append(line);
  }
  for (const file of tests.files) {
    for (const diagnostic of file.diagnostics) box.append(element("div", "fail", diagnostic.description));
    for (const testCase of file.cases.filter((each) => !each.passed)) {
      const line = element("div", "fail", `FAIL ${file.path}:${testCase.line}: ${testCase.name}`);
      line.dataset.testid = "failed-test";
      box.append(line);
      for (const failure of testCase.failures) box.append(element("div", "muted", `  ${failure}`));
      // Why the decision falls short, as `explain` says it.
      for (const explanation of testCase.explanations) {
        const why = element("pre", "test-explanation", explanation);
        why.dataset.testid = "test-explanation";
        box.append(why);
      }
    }
  }
  for (const coverage of tests.coverage) {
    const rules = coverage.rules.length - coverage.unexercisedRules.length;
    const workspaces = coverage.workspaces.length - coverage.unexercisedWorkspaces.length;
    box.append(element("div", "muted",
      `coverage of ${coverage.policy}: ${rules} of ${coverage.rules.length} rules, ` +
      `${workspaces} of ${coverage.workspaces.length} workspaces exercised`));
    for (const rule of coverage.unexercisedRules) box.append(element("div", "fail", `  rule '${rule}' not exercised`));
  }
}
