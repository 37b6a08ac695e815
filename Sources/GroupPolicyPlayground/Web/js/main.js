// The playground page: loads the directory's files, sends every edit to the server and draws its
// answers. It computes nothing itself: every diagnostic, decision, explanation, test result and
// matrix cell comes from the server, which runs the CLI's code.

import { get, post } from "./api.js";
import {
  explanationRequest, renderDecision, renderDiagnostics, renderExplanation, renderTests,
} from "./answers.js";
import { hideConflict, showConflict } from "./conflict.js";
import { $, element, setStatus } from "./dom.js";
import { renderFileMenu, renderGutter, showFile, updateSave } from "./editor.js";
import { renderMatrix } from "./matrix.js";
import { addTest, choosePin, pinOfCustomer } from "./pin.js";
import { restoreFromFragment, shareFragment } from "./share.js";
import { baselineRequest, pinBaseline, unpinBaseline } from "./verdict.js";
import { state } from "./state.js";

// The answers an edit asks for. Each route has at most one request on its way: an edit made while
// one is pending marks the route to ask again, with the page's state as it is then, once the answer
// comes. So however fast the author types, the server computes at most one matrix for the page at
// a time, and every answer drawn is to the latest edit or an earlier one, never out of order.
const routes = {
  check: { path: "/api/check", render: renderDiagnostics },
  decision: { path: "/api/decision", render: renderDecision },
  tests: { path: "/api/tests", render: renderTests },
  matrix: { path: "/api/matrix", render: renderMatrix, extra: baselineRequest },
  explain: { path: "/api/explain", render: renderExplanation, extra: explanationRequest },
};
for (const route of Object.values(routes)) Object.assign(route, { pending: false, again: false, drawn: 0 });

/** Asks a route about the current edit, or marks it to ask again when its answer comes. */
function ask(route) {
  if (route.pending) {
    route.again = true;
    return;
  }
  const extra = route.extra ? route.extra() : {};
  if (extra === null) {
    route.drawn = state.generation;
    return;
  }
  route.pending = true;
  route.again = false;
  const generation = state.generation;
  post(route.path, Object.assign({ page: state.page }, extra))
    .then((answer) => {
      route.drawn = generation;
      route.render(answer, generation);
    })
    .catch((error) => setStatus(`error: ${error.message}`))
    .finally(() => {
      route.pending = false;
      if (route.again || route.drawn < state.generation) {
        ask(route);
      } else {
        settle();
      }
    });
}

/** Says "up to date" once every route has drawn its answer to the latest edit. */
function settle() {
  if (Object.values(routes).every((route) => !route.pending && route.drawn === state.generation)) {
    updateSave();
    setStatus("up to date");
  }
}

function refresh() {
  state.generation += 1;
  state.checked = false;
  updateSave();
  setStatus("evaluating…");
  for (const route of Object.values(routes)) ask(route);
}

let timer = null;
function scheduleRefresh() {
  clearTimeout(timer);
  timer = setTimeout(refresh, 150);
}

/** Explains a capability (in one group, or in all of them for a why-not). */
function explain(capability, groupId) {
  state.explained = { capability, groupId };
  choosePin(pinOfCustomer(capability, groupId));
  ask(routes.explain);
}

/** A file's text changed other than by typing (a test added, a share link opened): show it, ask again. */
function edited(name) {
  if (state.current === name) showFile(name);
  renderFileMenu();
  refresh();
}

/** Makes a share link of the page's state: the URL's fragment, which no server sees. */
async function share() {
  try {
    const fragment = await shareFragment();
    // Replaced, not navigated to: the page stays as it is, and no hashchange restores it again.
    history.replaceState(null, "", `#${fragment}`);
    $("share-link").value = location.href;
    $("share-link").select();
    $("share-status").textContent = `link made (${location.href.length} characters): copy it from the box`;
  } catch (error) {
    $("share-status").textContent = error.message;
  }
}

/** Opens the state of a share link the page was navigated to; refused, nothing changes. */
async function restore() {
  if (!(await restoreFromFragment())) return;
  showFile(state.current);
  renderFileMenu();
  refresh();
}

/**
 * Saves the file in the editor over the version it was edited from (`version`: the loaded one, or
 * the one a conflict showed when the author overwrites on purpose). A file that changed on disk
 * since is not written: the page shows what changed and lets the author choose.
 */
async function save(version) {
  const name = state.current;
  // What is sent is what is saved, whatever the author types while the save is on its way.
  const text = state.edited[name];
  $("save").disabled = true;
  try {
    const answer = await post("/api/save", {
      file: name, files: { [name]: text }, versions: { [name]: version || state.versions[name] },
    });
    state.saved[name] = text;
    state.versions[name] = answer.version;
    hideConflict();
    renderFileMenu();
    $("save-status").textContent = `saved ${answer.saved} (${answer.bytes} bytes)`;
    refresh();
  } catch (error) {
    $("save-status").textContent = error.message;
    if (error.status === 409) showConflict(error.answer, (choice) => resolve(choice, error.answer));
    updateSave();
  }
}

/** The author's choice after a conflict: take the file on disk, or save the edit over it. */
function resolve(choice, conflict) {
  hideConflict();
  const name = conflict.file;
  if (choice === "overwrite") {
    if (state.current !== name) showFile(name);
    save(conflict.diskVersion);
    return;
  }
  state.saved[name] = conflict.disk;
  state.edited[name] = conflict.disk;
  state.versions[name] = conflict.diskVersion;
  $("save-status").textContent = `reloaded ${name} from disk`;
  showFile(name);
  renderFileMenu();
  refresh();
}

async function start() {
  const files = await get("/api/files");
  state.engine = files.engine;
  $("engine").textContent = `engine ${files.engine}`;
  $("directory").textContent = files.directory;
  for (const file of files.files) {
    state.files.push(file.name);
    if (file.kind === "tests") state.testFiles[file.name] = true;
    state.saved[file.name] = file.text;
    state.edited[file.name] = file.text;
    state.versions[file.name] = file.version;
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
  const editedResponse = element("option", "", "edited");
  editedResponse.value = "";
  $("response-choice").append(editedResponse);
  if (files.responses.length > 0) $("response").value = files.responses[0].text;
  // A share link's state, checked whole before any of it is taken; else the files as on disk.
  const restored = await restoreFromFragment();
  showFile(restored ? state.current : state.files[0]);
  renderFileMenu();

  $("file").addEventListener("change", () => showFile($("file").value));
  $("policy").addEventListener("input", () => {
    state.edited[state.current] = $("policy").value;
    // Not checked yet: save waits for this edit's check, not the last one's (which would let a
    // click land in the instant before the refresh disables it, and do nothing).
    state.checked = false;
    renderGutter();
    renderFileMenu();
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
  $("decision").addEventListener("explain", (event) => explain(event.detail.capability, event.detail.groupId));
  $("save").addEventListener("click", () => save());
  $("pin-baseline").addEventListener("click", () => {
    pinBaseline();
    refresh();
  });
  $("unpin-baseline").addEventListener("click", () => {
    unpinBaseline();
    refresh();
  });
  $("add-test").addEventListener("click", () => addTest(edited));
  $("share").addEventListener("click", () => share());
  window.addEventListener("hashchange", () => restore());
  refresh();
}

start().catch((error) => setStatus(`error: ${error.message}`));
