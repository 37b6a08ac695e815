// What the page holds: the directory's files as loaded and as edited, the customer, and the
// bookkeeping of the answers in flight. One object, shared by the page's modules.

import { $ } from "./dom.js";

export const state = {
  // The engine's version, as the server names it.
  engine: "",
  // The files' names: the policy files, then the test files, in the directory's order.
  files: [],
  // Which files are test files: { name: true }.
  testFiles: {},
  // Each file's text as the page loaded (or last saved) it, its version (what a save names), and
  // its text as edited.
  saved: {},
  versions: {},
  edited: {},
  // The file in the editor.
  current: null,
  // The responses to choose from: { name, text }.
  responses: [],
  // Each file's lines with a diagnostic: { line: "error" | "warning" }.
  marks: {},
  // The capability last clicked, and the one the explanation on its way is of: { capability, groupId }.
  explained: null,
  explaining: null,
  // The version the verdict compares with: null for the files on disk, or { files, at } pinned.
  baseline: null,
  // What "add test" would pin ({ request, label }), and the test it added last ({ file, name }).
  pin: null,
  pinned: null,
  // A random id for this page: the server computes one matrix at a time per page.
  page: Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, "0")).join(""),
  // Bumped by every edit, so an answer to an older one is not drawn.
  generation: 0,
  // The errors of the last check, and whether the current edit has been checked.
  errors: 0,
  checked: false,
};

/** The entitlements the author typed, split at commas and spaces. */
export function entitlements() {
  return $("entitlements").value.split(/[\s,]+/).filter((value) => value.length > 0);
}

/** Whether a file's text differs from what is on disk. */
export function isEdited(name) {
  return state.edited[name] !== state.saved[name];
}

/** The body of a request: the edited files, the customer, and what the route asks about. */
export function payload(extra) {
  const files = {};
  for (const name of state.files) {
    if (isEdited(name)) files[name] = state.edited[name];
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
