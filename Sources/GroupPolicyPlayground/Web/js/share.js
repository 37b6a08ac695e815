// Share links without a server: the page's whole state (every file's text as edited, the
// response, the environment, the entitlements, the pinned baseline, the file in the editor)
// compressed into the URL's fragment, which browsers never send to a server. The fragment names
// its format version before anything else (`#share-v1=`), and the state inside names the format
// and the engine version that made it. A link of another format is refused with one line and
// nothing of it is loaded; a link is checked whole before any of it replaces the page's state.

// In every browser since 2023, and not yet among the browser globals Debian's ESLint knows.
/* global CompressionStream, DecompressionStream */

import { $ } from "./dom.js";
import { state } from "./state.js";

/** The format of the links this page writes and reads. */
export const SHARE_FORMAT = 1;
/** The most characters of a link's fragment: Chromium's limit on a URL is 2 MB. */
const MAXIMUM_FRAGMENT = 2000000;
/**
 * The most bytes a link's state may decompress to: twice the CLI's limit on one policy file. A
 * link of 2 MB could otherwise hold gigabytes of compressed spaces.
 */
const MAXIMUM_STATE_BYTES = 64 * 1024 * 1024;
const KEYS = ["format", "engine", "files", "response", "responseName", "environment", "entitlements",
  "baseline", "current"];
const ENVIRONMENTS = ["production", "sandbox"];

class ShareRefusal extends Error {}

function base64url(bytes) {
  let binary = "";
  for (let index = 0; index < bytes.length; index += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(index, index + 0x8000));
  }
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64url(text) {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new ShareRefusal("its data is not base64url");
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (character) => character.charCodeAt(0));
}

/** The bytes `stream` makes of `bytes`; past `limit` bytes, a ShareRefusal (and the rest unread). */
async function transform(bytes, stream, limit = Infinity) {
  const reader = new Blob([bytes]).stream().pipeThrough(stream).getReader();
  const chunks = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.length;
    if (length > limit) {
      await reader.cancel();
      throw new ShareRefusal(`its state is over ${limit} bytes uncompressed`);
    }
    chunks.push(value);
  }
  const joined = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.length;
  }
  return joined;
}

/** The page's state as a share link's fragment (without `#`). */
export async function shareFragment() {
  const snapshot = {
    format: SHARE_FORMAT,
    engine: state.engine,
    files: Object.fromEntries(state.files.map((name) => [name, state.edited[name]])),
    response: $("response").value,
    responseName: $("response-choice").value,
    environment: $("environment").value,
    entitlements: $("entitlements").value,
    baseline: state.baseline,
    current: state.current,
  };
  const json = new TextEncoder().encode(JSON.stringify(snapshot));
  const fragment = `share-v${SHARE_FORMAT}=${base64url(await transform(json, new CompressionStream("gzip")))}`;
  if (fragment.length > MAXIMUM_FRAGMENT) {
    throw new Error(`not shared: the state is ${fragment.length} characters compressed, over the ` +
      `${MAXIMUM_FRAGMENT} a link may hold (save the files instead)`);
  }
  return fragment;
}

function isStringMap(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value) &&
    Object.values(value).every((each) => typeof each === "string");
}

/** The state a fragment holds, checked whole; throws a ShareRefusal naming the first problem. */
async function readFragment(fragment) {
  if (fragment.length > MAXIMUM_FRAGMENT) {
    throw new ShareRefusal(`it is ${fragment.length} characters, over the ${MAXIMUM_FRAGMENT} a link may hold`);
  }
  const match = /^share-v(\d+)=(.*)$/s.exec(fragment);
  if (!match) throw new ShareRefusal("it is not a share link of this playground");
  if (Number(match[1]) !== SHARE_FORMAT) {
    throw new ShareRefusal(`it is share format v${match[1]}, and this page reads v${SHARE_FORMAT} ` +
      `(engine ${state.engine})`);
  }
  let snapshot;
  try {
    const text = new TextDecoder("utf-8", { fatal: true })
      .decode(await transform(fromBase64url(match[2]), new DecompressionStream("gzip"), MAXIMUM_STATE_BYTES));
    snapshot = JSON.parse(text);
  } catch (error) {
    if (error instanceof ShareRefusal) throw error;
    throw new ShareRefusal("its data does not decompress to JSON (cut short when copied?)");
  }
  if (snapshot === null || typeof snapshot !== "object" || Array.isArray(snapshot)) {
    throw new ShareRefusal("its state is not an object");
  }
  const unknown = Object.keys(snapshot).filter((key) => !KEYS.includes(key));
  if (unknown.length) throw new ShareRefusal(`its state has an unknown key '${unknown[0]}'`);
  const missing = KEYS.filter((key) => !(key in snapshot));
  if (missing.length) throw new ShareRefusal(`its state has no '${missing[0]}'`);
  if (snapshot.format !== SHARE_FORMAT) {
    throw new ShareRefusal(`its state is format ${JSON.stringify(snapshot.format)}, not ${SHARE_FORMAT}`);
  }
  for (const key of ["engine", "response", "responseName", "environment", "entitlements", "current"]) {
    if (typeof snapshot[key] !== "string") throw new ShareRefusal(`its '${key}' is not a string`);
  }
  if (!isStringMap(snapshot.files)) throw new ShareRefusal("its 'files' are not texts by file name");
  const foreign = Object.keys(snapshot.files).find((name) => !state.files.includes(name));
  if (foreign !== undefined) throw new ShareRefusal(`it holds '${foreign}', which is not a file of this directory`);
  if (!(snapshot.current in snapshot.files)) throw new ShareRefusal(`its file in the editor is not one it holds`);
  if (!ENVIRONMENTS.includes(snapshot.environment)) {
    throw new ShareRefusal(`its environment '${snapshot.environment}' is not production or sandbox`);
  }
  const baseline = snapshot.baseline;
  if (baseline !== null && !(baseline && typeof baseline === "object" && typeof baseline.at === "string" &&
      isStringMap(baseline.files) && Object.keys(baseline).length === 2 &&
      state.files.every((name) => name in baseline.files) &&
      Object.keys(baseline.files).every((name) => state.files.includes(name)))) {
    throw new ShareRefusal("its pinned baseline is not one this directory's files can take");
  }
  return snapshot;
}

/**
 * Restores the state of the link the page was opened with (or navigated to), if its fragment is
 * one: all of it, or, refused, none of it. Returns whether anything was restored.
 */
export async function restoreFromFragment() {
  const raw = location.hash.replace(/^#/, "");
  if (!raw.startsWith("share")) return false;
  let snapshot;
  try {
    let fragment;
    try {
      fragment = decodeURIComponent(raw);
    } catch {
      throw new ShareRefusal("its fragment holds a '%' that is not a well-formed escape (cut short when copied?)");
    }
    snapshot = await readFragment(fragment);
  } catch (error) {
    const reason = error instanceof ShareRefusal ? error.message : `it could not be read (${error.message})`;
    $("share-status").textContent = `share link not loaded: ${reason}; nothing of it was loaded`;
    return false;
  }
  for (const name of state.files) {
    state.edited[name] = name in snapshot.files ? snapshot.files[name] : state.saved[name];
  }
  const response = state.responses.find((choice) => choice.name === snapshot.responseName);
  $("response-choice").value = response && response.text === snapshot.response ? response.name : "";
  $("response").value = snapshot.response;
  $("environment").value = snapshot.environment;
  $("entitlements").value = snapshot.entitlements;
  state.baseline = snapshot.baseline;
  state.current = snapshot.current;
  $("share-status").textContent = snapshot.engine === state.engine
    ? `restored the shared state (engine ${snapshot.engine})`
    : `restored the shared state, made with engine ${snapshot.engine}; this playground runs ${state.engine}, ` +
      "so its answers may differ";
  return true;
}
