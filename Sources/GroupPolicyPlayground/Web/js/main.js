// The playground page: loads the directory's files, sends every edit to the server and draws its
// answers. It computes nothing itself: every diagnostic, decision, explanation, test result and
// matrix cell comes from the server, which runs the CLI's code.

import { get, post } from "./api.js";
import { refreshExplanation, explain, renderDecision, renderDiagnostics, renderTests } from "./answers.js";
import { $, element, setStatus } from "./dom.js";
import { renderFileMenu, renderGutter, showFile, updateSave } from "./editor.js";
import { renderMatrix } from "./matrix.js";
import { state } from "./state.js";

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
  // What is sent is what is saved, whatever the author types while the save is on its way.
  const text = state.edited[name];
  $("save").disabled = true;
  try {
    const answer = await post("/api/save", { file: name, files: { [name]: text } });
    state.saved[name] = text;
    renderFileMenu();
    $("save-status").textContent = `saved ${answer.saved} (${answer.bytes} bytes)`;
    await refresh();
  } catch (error) {
    $("save-status").textContent = error.message;
    updateSave();
  }
}

async function start() {
  const files = await get("/api/files");
  $("engine").textContent = `engine ${files.engine}`;
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
  $("save").addEventListener("click", save);
  await refresh();
}

start().catch((error) => setStatus(`error: ${error.message}`));
