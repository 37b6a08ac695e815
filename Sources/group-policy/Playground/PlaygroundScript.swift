/// The playground page's script: it sends the author's edits and the customer to the server and
/// shows the answers. It computes nothing itself: every diagnostic, decision, explanation, test
/// result and matrix cell comes from the server, which runs the CLI's code.
enum PlaygroundScript {
    static let javaScript = #"""
        "use strict";
        (() => {
          const $ = (id) => document.getElementById(id);
          const state = {
            files: [], saved: {}, edited: {}, current: null, responses: [],
            explained: null, generation: 0, errors: 0, checked: false,
          };

          function element(tag, className, text) {
            const node = document.createElement(tag);
            if (className) node.className = className;
            if (text !== undefined) node.textContent = text;
            return node;
          }

          function entitlements() {
            return $("entitlements").value.split(/[\s,]+/).filter((value) => value.length > 0);
          }

          function payload(extra) {
            const files = {};
            for (const name of state.files) {
              if (state.edited[name] !== state.saved[name]) files[name] = state.edited[name];
            }
            const choice = $("response-choice").value;
            return Object.assign({
              files,
              response: $("response").value,
              responseName: choice === "" ? "edited response" : choice,
              environment: $("environment").value,
              entitlements: entitlements(),
            }, extra || {});
          }

          async function post(path, extra) {
            const answer = await fetch(path, {
              method: "POST",
              headers: { "Content-Type": "application/json" },
              body: JSON.stringify(payload(extra)),
            });
            const json = await answer.json();
            if (!answer.ok) throw new Error(json.error || answer.statusText);
            return json;
          }

          function setStatus(text) { $("status").textContent = text; }

          // MARK: Editor

          function renderGutter() {
            const count = $("policy").value.split("\n").length;
            const lines = [];
            for (let line = 1; line <= count; line += 1) lines.push(String(line));
            $("gutter").textContent = lines.join("\n");
            $("gutter").scrollTop = $("policy").scrollTop;
          }

          function showFile(name) {
            state.current = name;
            $("file").value = name;
            $("policy").value = state.edited[name];
            renderGutter();
            updateSave();
          }

          function jumpTo(line, column) {
            const editor = $("policy");
            const lines = editor.value.split("\n");
            let offset = 0;
            for (let index = 0; index < line - 1 && index < lines.length; index += 1) offset += lines[index].length + 1;
            offset += Math.max(0, (column || 1) - 1);
            editor.focus();
            editor.setSelectionRange(offset, offset);
            const lineHeight = parseFloat(getComputedStyle(editor).lineHeight) || 18;
            editor.scrollTop = Math.max(0, (line - 5) * lineHeight);
            renderGutter();
          }

          function updateSave() {
            const changed = state.current !== null && state.edited[state.current] !== state.saved[state.current];
            $("save").disabled = !(changed && state.checked && state.errors === 0);
            $("save").title = state.errors > 0 ? "The edit has errors: fix them to save." : "";
          }

          // MARK: Answers

          function renderDiagnostics(answer) {
            const list = $("diagnostics");
            list.replaceChildren();
            state.checked = true;
            if (answer.error) {
              state.errors = 1;
              list.append(element("li", "error", answer.error));
              return;
            }
            const check = answer.check;
            state.errors = check.summary.errors;
            for (const file of check.files) {
              for (const diagnostic of file.diagnostics) {
                const item = element("li", diagnostic.severity, diagnostic.description);
                item.dataset.file = diagnostic.file || file.path;
                if (diagnostic.line !== null) item.dataset.line = String(diagnostic.line);
                item.addEventListener("click", () => {
                  const name = (diagnostic.file || "").split("/").pop();
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
          }

          function renderDecision(answer) {
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
                button.addEventListener("click", () => explain(name, group.groupId));
                line.append(button);
                const rules = [...new Set(decision.grants
                  .filter((grant) => grant.groupId === group.groupId && grant.capability === name)
                  .map((grant) => grant.rule))];
                line.append(element("span", "rules", rules.length ? `by ${rules.join(", ")}` : ""));
                card.append(line);
              }
              for (const denial of decision.denials.filter((denial) => denial.groupId === group.groupId)) {
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

          async function explain(capability, groupId) {
            state.explained = { capability, groupId };
            await refreshExplanation(state.generation);
          }

          async function refreshExplanation(generation) {
            if (!state.explained) return;
            const extra = { capability: state.explained.capability };
            if (state.explained.groupId) extra.group = state.explained.groupId;
            const answer = await post("/api/explain", extra);
            if (generation !== state.generation && generation !== undefined && generation < state.generation) return;
            const box = $("explanation");
            box.classList.remove("muted");
            box.textContent = answer.error ? answer.error : answer.text;
            box.dataset.capability = state.explained.capability;
          }

          function renderTests(answer) {
            const box = $("tests");
            box.replaceChildren();
            if (answer.error) {
              box.append(element("div", "error-line", answer.error));
              return;
            }
            const tests = answer.tests;
            box.append(element("div", tests.failed === 0 ? "pass" : "fail", `${tests.passed} passed, ${tests.failed} failed`));
            for (const file of tests.files) {
              for (const diagnostic of file.diagnostics) box.append(element("div", "fail", diagnostic.description));
              for (const testCase of file.cases.filter((testCase) => !testCase.passed)) {
                box.append(element("div", "fail", `FAIL ${file.path}:${testCase.line}: ${testCase.name}`));
                for (const failure of testCase.failures) box.append(element("div", "muted", `  ${failure}`));
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

          function renderMatrix(answer) {
            const box = $("scenario-matrix");
            box.replaceChildren();
            $("diff").textContent = "";
            if (answer.error) {
              $("matrix-summary").textContent = "";
              box.append(element("div", "error-line", answer.error));
              return;
            }
            const matrix = answer.matrix;
            const table = element("table");
            const head = element("tr");
            for (const title of ["Group type", "Product", "Role"]) head.append(element("th", "", title));
            for (const capability of matrix.capabilities) head.append(element("th", "capability-column", capability));
            table.append(head);
            let changed = 0;
            for (const row of matrix.rows) {
              const tr = element("tr");
              tr.append(element("td", "scenario", row.groupType));
              tr.append(element("td", "scenario", row.productId === null ? "(no role entry)" : row.productId));
              tr.append(element("td", "scenario", row.role === null ? "" : row.role));
              for (const capability of matrix.capabilities) {
                const granted = row.capabilities.includes(capability);
                const isChanged = row.changed.includes(capability);
                const cell = element("td", (granted ? "granted" : "") + (isChanged ? " changed" : ""), granted ? "✓" : "");
                cell.dataset.capability = capability;
                cell.dataset.granted = String(granted);
                cell.dataset.changed = String(isChanged);
                cell.title = `${capability}: ${granted ? "granted" : "not granted"}${isChanged ? " (changed against the saved files)" : ""}`;
                if (isChanged) changed += 1;
                tr.append(cell);
              }
              table.append(tr);
            }
            box.append(table);
            const entitlementText = matrix.entitlements.length ? matrix.entitlements.join(", ") : "none";
            $("matrix-summary").textContent =
              `${matrix.rows.length} scenarios in ${matrix.environment}, entitlements: ${entitlementText}; ` +
              `${changed} cells changed against the saved files.`;
            if (answer.diffTable !== null) $("diff").textContent = answer.diffTable;
          }

          async function refresh() {
            state.generation += 1;
            const generation = state.generation;
            state.checked = false;
            updateSave();
            setStatus("evaluating…");
            const answers = [
              ["/api/check", renderDiagnostics],
              ["/api/decision", renderDecision],
              ["/api/tests", renderTests],
              ["/api/matrix", renderMatrix],
            ].map(async ([path, render]) => {
              const answer = await post(path);
              if (generation === state.generation) render(answer);
            });
            answers.push(refreshExplanation(generation));
            try {
              await Promise.all(answers);
              if (generation === state.generation) {
                updateSave();
                setStatus("up to date");
              }
            } catch (error) {
              setStatus(`error: ${error.message}`);
            }
          }

          let timer = null;
          function scheduleRefresh() {
            clearTimeout(timer);
            timer = setTimeout(refresh, 150);
          }

          async function save() {
            const name = state.current;
            $("save").disabled = true;
            try {
              const answer = await post("/api/save", { file: name, files: { [name]: state.edited[name] } });
              state.saved[name] = state.edited[name];
              $("save-status").textContent = `saved ${answer.saved} (${answer.bytes} bytes)`;
              await refresh();
            } catch (error) {
              $("save-status").textContent = error.message;
              updateSave();
            }
          }

          async function start() {
            const answer = await fetch("/api/files");
            const files = await answer.json();
            $("directory").textContent = files.directory;
            for (const file of files.files) {
              state.files.push(file.name);
              state.saved[file.name] = file.text;
              state.edited[file.name] = file.text;
              const option = element("option", "", file.name);
              option.value = file.name;
              $("file").append(option);
            }
            state.responses = files.responses;
            for (const response of files.responses) {
              const option = element("option", "", response.name);
              option.value = response.name;
              $("response-choice").append(option);
            }
            const edited = element("option", "", "edited");
            edited.value = "";
            $("response-choice").append(edited);
            if (files.responses.length > 0) $("response").value = files.responses[0].text;
            showFile(state.files[0]);

            $("file").addEventListener("change", () => showFile($("file").value));
            $("policy").addEventListener("input", () => {
              state.edited[state.current] = $("policy").value;
              renderGutter();
              updateSave();
              scheduleRefresh();
            });
            $("policy").addEventListener("scroll", () => { $("gutter").scrollTop = $("policy").scrollTop; });
            $("response-choice").addEventListener("change", () => {
              const response = state.responses.find((choice) => choice.name === $("response-choice").value);
              if (response) $("response").value = response.text;
              scheduleRefresh();
            });
            $("response").addEventListener("input", () => {
              $("response-choice").value = "";
              scheduleRefresh();
            });
            $("environment").addEventListener("change", scheduleRefresh);
            $("entitlements").addEventListener("input", scheduleRefresh);
            $("why-not").addEventListener("click", () => explain($("why-not-capability").value, null));
            $("save").addEventListener("click", save);
            await refresh();
          }

          document.addEventListener("DOMContentLoaded", () => {
            start().catch((error) => setStatus(`error: ${error.message}`));
          });
        })();

        """#
}
