// Tests from a click: what the author last chose (a matrix cell, a capability of the Decision, or
// a why-not) becomes, with one click on "add test", the test case that pins it, added to the test
// file of the policy that declares the capability as an unsaved edit, which the tests then run.
// The server writes the case (the tooling's Scenario.testCaseJSON) and the file's new text.

import { post } from "./api.js";
import { $ } from "./dom.js";
import { entitlements, state } from "./state.js";

/** Remembers what "add test" would pin, and says so beside the button. */
export function choosePin(pin) {
  state.pin = pin;
  $("add-test").disabled = false;
  $("add-test-subject").textContent = pin.label;
}

/** A capability of the Decision (in a group) or a why-not (no group), for the page's customer. */
export function pinOfCustomer(capability, groupId) {
  const choice = $("response-choice").value;
  return {
    request: {
      capability,
      response: $("response").value,
      responseName: choice === "" ? "edited response" : choice,
      environment: $("environment").value,
      entitlements: entitlements(),
      ...(groupId ? { group: groupId } : {}),
    },
    label: groupId
      ? `${capability} in group ${groupId} of the response`
      : `${capability} for the whole response (why not)`,
  };
}

/** A cell of the scenario matrix: its scenario as a one-group response, in the matrix's context. */
export function pinOfCell(matrix, row, capability) {
  const group = { groupId: row.groupId, groupType: row.groupType };
  if (row.productId !== null) group.roles = [{ productId: row.productId, role: row.role }];
  const scenario = [row.groupType, row.productId, row.role].filter((part) => part !== null).join(" ");
  return {
    request: {
      capability,
      group: row.groupId,
      response: JSON.stringify({ groups: [group] }),
      responseName: "a matrix cell",
      environment: matrix.environment,
      entitlements: matrix.entitlements,
    },
    label: `${capability} for ${scenario} in ${matrix.environment} (matrix cell)`,
  };
}

/**
 * Asks the server for the pinning case and holds the test file's new text as an unsaved edit;
 * `edited(file)` redraws the editor and asks every answer again.
 */
export async function addTest(edited) {
  if (!state.pin) return;
  $("add-test").disabled = true;
  try {
    const answer = await post("/api/add-test", state.pin.request);
    if (answer.error) {
      $("add-test-status").textContent = `no test added: ${answer.error}`;
      return;
    }
    state.edited[answer.file] = answer.text;
    state.pinned = { file: answer.file, name: answer.name };
    $("add-test-status").textContent =
      `added the test '${answer.name}' to ${answer.file} (unsaved: save that file to keep it)`;
    edited(answer.file);
  } catch (error) {
    $("add-test-status").textContent = `no test added: ${error.message}`;
  } finally {
    $("add-test").disabled = false;
  }
}
