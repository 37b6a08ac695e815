// The page's requests: JSON to the playground's own routes, and its answers.

import { payload } from "./state.js";

/** An answer that is not 2xx: its line, its status, and the rest of its JSON. */
export class Refusal extends Error {
  constructor(status, json) {
    super(json.error || `status ${status}`);
    this.status = status;
    this.answer = json;
  }
}

/** Posts the page's state (and `extra`) to a route; an answer that is not 2xx throws a Refusal. */
export async function post(path, extra) {
  const answer = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(payload(extra)),
  });
  const json = await answer.json();
  if (!answer.ok) throw new Refusal(answer.status, json);
  return json;
}

/** Gets a route's JSON. */
export async function get(path) {
  const answer = await fetch(path);
  const json = await answer.json();
  if (!answer.ok) throw new Error(json.error || answer.statusText);
  return json;
}
