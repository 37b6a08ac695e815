// Draws the scenario matrix: every scenario against every capability, the cells an edit changes
// against the saved files marked, and the diff's table.

import { $, element } from "./dom.js";
import { choosePin, pinOfCell } from "./pin.js";
import { renderVerdict } from "./verdict.js";

export function renderMatrix(answer) {
  renderVerdict(answer);
  const box = $("scenario-matrix");
  box.replaceChildren();
  $("diff").textContent = "";
  if (answer.error) {
    $("matrix-summary").textContent = "";
    box.append(element("div", "error-line", answer.error));
    return;
  }
  const matrix = answer.matrix;
  // The group id only matters when a policy names one: then each id has its rows.
  const byGroup = new Set(matrix.rows.map((row) => row.groupId)).size > 1;
  const table = element("table");
  const head = element("tr");
  const titles = (byGroup ? ["Group"] : []).concat(["Group type", "Product", "Role"]);
  for (const title of titles) head.append(element("th", "", title));
  for (const capability of matrix.capabilities) head.append(element("th", "capability-column", capability));
  table.append(head);
  let changed = 0;
  for (const row of matrix.rows) {
    const tr = element("tr");
    if (byGroup) tr.append(element("td", "scenario", row.groupId));
    tr.append(element("td", "scenario", row.groupType));
    tr.append(element("td", "scenario", row.productId === null ? "(no role entry)" : row.productId));
    tr.append(element("td", "scenario", row.role === null ? "" : row.role));
    for (const capability of matrix.capabilities) {
      const granted = row.capabilities.includes(capability);
      const isChanged = row.changed.includes(capability);
      const mark = granted ? "✓" : isChanged ? "−" : "";
      const cell = element("td", (granted ? "granted" : "") + (isChanged ? " changed" : ""), mark);
      cell.dataset.capability = capability;
      cell.dataset.granted = String(granted);
      cell.dataset.changed = String(isChanged);
      const change = isChanged ? (granted ? " (gained against the saved files)" : " (lost against the saved files)") : "";
      cell.title = `${capability}: ${granted ? "granted" : "not granted"}${change}; click to pin it in a test`;
      cell.addEventListener("click", () => {
        for (const chosen of box.querySelectorAll("td.chosen")) chosen.classList.remove("chosen");
        cell.classList.add("chosen");
        choosePin(pinOfCell(matrix, row, capability));
      });
      if (isChanged) changed += 1;
      tr.append(cell);
    }
    table.append(tr);
  }
  box.append(table);
  const entitlementText = matrix.entitlements.length ? matrix.entitlements.join(", ") : "none";
  $("matrix-summary").textContent =
    `${matrix.rows.length} scenarios × ${matrix.capabilities.length} capabilities in ${matrix.environment}, ` +
    `entitlements: ${entitlementText}; ${changed} ${changed === 1 ? "cell" : "cells"} changed against the ` +
    `${answer.baseline === "pinned" ? "pinned version" : "saved files"} ` +
    "(✓ granted; outlined: changed, − lost).";
  $("diff").textContent = answer.diffTable !== null ? answer.diffTable : answer.diffRefusal || "";
}
