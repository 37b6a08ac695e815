// A save refused because the file changed on disk since the page loaded it: what changed, and the
// author's two ways out, reload the file on disk or overwrite it on purpose.

import { $ } from "./dom.js";

/** The most cells of the line table the diff fills; past it, only the changed region's size. */
const maximumDiffCells = 4000000;

/** Lines around each change shown unchanged. */
const contextLines = 2;

/**
 * The lines of `before` and `after` as a diff: `  ` unchanged (only near a change), `- ` only in
 * `before`, `+ ` only in `after`, `…` for unchanged lines left out.
 */
export function lineDiff(before, after) {
  const old = before.split("\n");
  const now = after.split("\n");
  let start = 0;
  while (start < old.length && start < now.length && old[start] === now[start]) start += 1;
  let endOld = old.length;
  let endNow = now.length;
  while (endOld > start && endNow > start && old[endOld - 1] === now[endNow - 1]) {
    endOld -= 1;
    endNow -= 1;
  }
  const middleOld = old.slice(start, endOld);
  const middleNow = now.slice(start, endNow);
  const lines = [];
  const first = Math.max(0, start - contextLines);
  if (first > 0) lines.push("…");
  for (let index = first; index < start; index += 1) lines.push(`  ${old[index]}`);
  if ((middleOld.length + 1) * (middleNow.length + 1) > maximumDiffCells) {
    lines.push(`(lines ${start + 1} to ${endOld} on disk and ${start + 1} to ${endNow} in the edit differ)`);
  } else {
    lines.push(...changedLines(middleOld, middleNow));
  }
  const last = Math.min(old.length, endOld + contextLines);
  for (let index = endOld; index < last; index += 1) lines.push(`  ${old[index]}`);
  if (last < old.length) lines.push("…");
  return lines.join("\n");
}

/** The longest common subsequence of two line lists, walked as removals, additions and keeps. */
function changedLines(old, now) {
  const width = now.length + 1;
  const table = new Uint32Array((old.length + 1) * width);
  for (let i = old.length - 1; i >= 0; i -= 1) {
    for (let j = now.length - 1; j >= 0; j -= 1) {
      table[i * width + j] = old[i] === now[j]
        ? table[(i + 1) * width + j + 1] + 1
        : Math.max(table[(i + 1) * width + j], table[i * width + j + 1]);
    }
  }
  const lines = [];
  let i = 0;
  let j = 0;
  while (i < old.length || j < now.length) {
    if (i < old.length && j < now.length && old[i] === now[j]) {
      lines.push(`  ${old[i]}`);
      i += 1;
      j += 1;
    } else if (i < old.length && (j === now.length || table[(i + 1) * width + j] >= table[i * width + j + 1])) {
      lines.push(`- ${old[i]}`);
      i += 1;
    } else {
      lines.push(`+ ${now[j]}`);
      j += 1;
    }
  }
  return lines;
}

/**
 * Shows a refused save: the line, what changed between the file on disk and the edit, and the
 * two buttons. `choose` is called with "reload" or "overwrite".
 */
export function showConflict(answer, choose) {
  $("conflict-message").textContent = answer.error;
  $("conflict-diff").textContent = lineDiff(answer.disk === null ? "" : answer.disk, answer.edit);
  $("conflict").hidden = false;
  $("conflict-reload").onclick = () => choose("reload");
  $("conflict-overwrite").onclick = () => choose("overwrite");
}

/** Hides the conflict. */
export function hideConflict() {
  $("conflict").hidden = true;
  $("conflict-diff").textContent = "";
}
