// The policy editor: its gutter of line numbers and marks, the file menu, and the save button.

import { $, element } from "./dom.js";
import { isEdited, state } from "./state.js";

/** Line numbers, the lines with a diagnostic marked (a span each; the rest stays text). */
export function renderGutter() {
  const count = $("policy").value.split("\n").length;
  const marks = state.marks[state.current] || {};
  const gutter = $("gutter");
  gutter.replaceChildren();
  let text = "";
  for (let line = 1; line <= count; line += 1) {
    const end = line < count ? "\n" : "";
    if (marks[line]) {
      gutter.append(text, element("span", `mark ${marks[line]}`, String(line)));
      text = end;
    } else {
      text += String(line) + end;
    }
  }
  gutter.append(text);
  gutter.scrollTop = $("policy").scrollTop;
}

/** The file menu says which files hold unsaved edits. */
export function renderFileMenu() {
  for (const option of $("file").options) {
    option.textContent = isEdited(option.value) ? `${option.value} (edited)` : option.value;
  }
}

/** Puts a file in the editor. */
export function showFile(name) {
  state.current = name;
  $("file").value = name;
  $("policy").value = state.edited[name];
  renderGutter();
  updateSave();
}

/** Puts the caret at a line and column of the file in the editor, and scrolls to it. */
export function jumpTo(line, column) {
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

/** Save is enabled for an edited file whose edit checked without errors. */
export function updateSave() {
  const changed = state.current !== null && isEdited(state.current);
  $("save").disabled = !(changed && state.checked && state.errors === 0);
  $("save").title = state.errors > 0 ? "The edit has errors: fix them to save." : "";
}
