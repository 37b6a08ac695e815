/// The playground page's script.
///
/// It sends the author's edits and the customer to the server and shows the answers. It computes
/// nothing itself: every diagnostic, decision, explanation, test result and matrix cell comes from
/// the server, which runs the CLI's code.
enum PlaygroundScript {
    /// The whole script: one function scope, whose function declarations are hoisted, so the
    /// parts may come in any order.
    static let javaScript = opening + rendering + closing

    /// The state, the requests, the editor, and what runs when the page loads.
    private static let opening = #"""
        "use strict";
        (() => {
          const $ = (id) => document.getElementById(id);
          const state = {
            files: [], saved: {}, edited: {}, current: null, responses: [], marks: {},
            explained: null, generation: 0, errors: 0, checked: false,
          };

          function element(tag, className, text) {
            const node = document.createElement(tag);
            if (className) node.className = className;
            if (text !== undefined) node.textContent = text;
            return node;
          }

          function entitlements() {
            return $("entitlements").value.split(/[\s,]+/).filter((value) => value.length > 0);
          }

          function payload(extra) {
            const files = {};
            for (const name of state.files) {
              if (state.edited[name] !== state.saved[name]) files[name] = state.edited[name];
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

          async function post(path, extra) {
            const answer = await fetch(path, {
              method: "POST",
              headers: { "Content-Type": "application/json" },
              body: JSON.stringify(payload(extra)),
            });
            const json = await answer.json();
            if (!answer.ok) throw new Error(json.error || answer.statusText);
            return json;
          }

          function setStatus(text) { $("status").textContent = text; }

          // MARK: Editor

          // Line numbers, the lines with a diagnostic marked (a span each; the rest stays text).
          function renderGutter() {
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

          // The file menu says which files hold unsaved edits.
          function renderFileMenu() {
            for (const option of $("file").options) {
              const edited = state.edited[option.value] !== state.saved[option.value];
              option.textContent = edited ? `${option.value} (edited)` : option.value;
            }
          }

          function showFile(name) {
            state.current = name;
            $("file").value = name;
            $("policy").value = state.edited[name];
            renderGutter();
            updateSave();
          }

          function jumpTo(line, column) {
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

          function updateSave() {
            const changed = state.current !== null && state.edited[state.current] !== state.saved[state.current];
            $("save").disabled = !(changed && state.checked && state.errors === 0);
            $("save").title = state.errors > 0 ? "The edit has errors: fix them to save." : "";
          }

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
            $("save").disabled = true;
            try {
              const answer = await post("/api/save", { file: name, files: { [name]: state.edited[name] } });
              state.saved[name] = state.edited[name];
              renderFileMenu();
              $("save-status").textContent = `saved ${answer.saved} (${answer.bytes} bytes)`;
              await refresh();
            } catch (error) {
              $("save-status").textContent = error.message;
              updateSave();
            }
          }

          async function start() {
            const answer = await fetch("/api/files");
            const files = await answer.json();
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

          document.addEventListener("DOMContentLoaded", () => {
            start().catch((error) => setStatus(`error: ${error.message}`));
          });

        """#

    /// The end of the function scope the script runs in.
    private static let closing = """
        })();

        """
}
