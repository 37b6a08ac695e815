// The verdict of the edit against its baseline (the files on disk, or a version the author
// pinned): equivalent, widens, narrows, or widens and narrows, overall and per capability and
// workspace, from the diff the server computed over the whole scenario space.

import { $, element } from "./dom.js";
import { state } from "./state.js";

/** The baseline the server should compare with: the pinned text of each file that differs from disk. */
export function baselineRequest() {
  if (state.baseline === null) return {};
  const baseline = {};
  for (const name of state.files) {
    if (state.baseline.files[name] !== state.saved[name]) baseline[name] = state.baseline.files[name];
  }
  return { baseline };
}

/** Pins the files as they are now as the baseline. */
export function pinBaseline() {
  state.baseline = { files: Object.assign({}, state.edited), at: new Date().toLocaleTimeString() };
  renderBaselineButtons();
}

/** Compares with the files on disk again. */
export function unpinBaseline() {
  state.baseline = null;
  renderBaselineButtons();
}

function renderBaselineButtons() {
  const pinned = state.baseline !== null;
  $("pin-baseline").hidden = pinned;
  $("unpin-baseline").hidden = !pinned;
  $("verdict-baseline").textContent = pinned
    ? `against the version pinned at ${state.baseline.at}`
    : "against the files on disk";
}

/** The verdict of a matrix answer, overall and per capability and workspace. */
export function renderVerdict(answer) {
  renderBaselineButtons();
  const verdict = $("verdict");
  const list = $("capability-verdicts");
  list.replaceChildren();
  $("verdict-note").textContent = "";
  if (answer.error || answer.verdict === null) {
    verdict.textContent = "no verdict";
    verdict.dataset.verdict = "";
    $("verdict-note").textContent = answer.error || answer.diffRefusal || "";
    return;
  }
  verdict.textContent = answer.verdict;
  verdict.dataset.verdict = answer.verdict;
  for (const [capability, each] of Object.entries(answer.diff.capabilityVerdicts)) {
    const item = element("li", "", `${capability}: ${each}`);
    item.dataset.capability = capability;
    item.dataset.verdict = each;
    list.append(item);
  }
  for (const [workspace, each] of Object.entries(answer.diff.workspaceVerdicts || {})) {
    const item = element("li", "", `workspace ${workspace}: ${each}`);
    item.dataset.workspace = workspace;
    item.dataset.verdict = each;
    list.append(item);
  }
}
