#!/usr/bin/env python3
"""The policy playground in a real browser: headless Chromium driven by Selenium.

Starts `group-policy playground` on a scratch copy of Policies/ and Examples/ (`--port 0`), reads
the URL from its first line, and drives the page as an author would: the bundled policies load
clean; a dropped comma shows its diagnostic at line 16; typing it back clears it; an edited rule
marks the matrix cells it changes; a capability and a "why not" are explained; save writes the file
on disk. Then a POST from another origin and a request naming a foreign Host are refused (over
HTTP, and the cross-origin one from a page of another origin in the browser too), and the
playground page logged no error in the browser's console. It saves a screenshot.

    Tests/Browser/playground_test.py [--binary .build/debug/group-policy] [--screenshot FILE]

Needs Chromium and its driver (Debian: apt-get install chromium chromium-driver) and Selenium
(pip install selenium). Without them it prints one line saying what to install and exits 0 as
skipped; with GROUP_POLICY_REQUIRE_ALL_TESTS=1 (as in CI) it fails instead.
"""

import argparse
import base64
import gzip
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHROMIUM_CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
DRIVER = "/usr/bin/chromedriver"
# Generous: a busy machine may be slow; every wait ends as soon as the page shows what it waits for.
WAIT_SECONDS = 90

CLEAN = "No errors or warnings in 2 policies and 2 test files; 9 of 9 invariants hold."
BROKEN = (
    "Policies/team-workspace.json:16:7: error: rules[0]: invalid JSON: expected ',' or '}', found '\"'"
)
RULE_BEFORE = '"capabilities": ["workspace.manage-settings"]'
RULE_AFTER = '"capabilities": ["workspace.manage-settings", "workspace.export"]'
MEMBERS_BEFORE = '"capabilities": ["workspace.view", "workspace.members"]'
MEMBERS_AFTER = '"capabilities": ["workspace.view"]'
PINNED_NAME = ("'workspace.export' is granted in Production, ORGANIZATION group 'unnamed-group', roles "
               "[com.example.teams.plus: ADMIN], entitlements []")
PINNED_SUBJECT = "workspace.export for ORGANIZATION com.example.teams.plus ADMIN in Production (matrix cell)"
PINNED_TEST = f"the added test at line 98: {PINNED_NAME}"
PINNED_EXPLANATION = (
    "capability workspace.export: granted in 0 of 1 group\n\ngroup unnamed-group (ORGANIZATION): not granted: rule "
    "'pro-admins-manage' needs role ADMIN for com.example.teams.pro; this group has no role for com.example.teams.pro"
)
SHARED_RESPONSE = """{ "groups": [ { "groupId": "42", "groupType": "ORGANIZATION",
  "roles": [ { "productId": "com.example.teams.pro", "role": "MEMBER" } ] } ] }"""
REDUNDANT_RULE = """    {
      "id": "pro-admins-view",
      "match": { "groupType": "ORGANIZATION", "productId": "com.example.teams.pro", "role": "ADMIN" },
      "capabilities": ["workspace.view"]
    },
"""
REDUNDANT = (
    "Policies/team-workspace.json:24:5: warning: rules[1]: rule 'pro-admins-view' is redundant: removing it changes "
    "no decision in any scenario (wherever it matches, each capability it grants is granted by another rule or denied)"
)


def missing_components():
    """What is not installed, as the packages to install."""
    missing = []
    if not any(os.access(path, os.X_OK) for path in CHROMIUM_CANDIDATES):
        missing.append("chromium (apt-get install chromium)")
    if not os.access(DRIVER, os.X_OK):
        missing.append("chromedriver (apt-get install chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("selenium (pip install selenium)")
    return missing


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


class Playground:
    """The playground process on a scratch copy of the bundled policies."""

    def __init__(self, binary):
        self.root = tempfile.mkdtemp(prefix="playground-browser-")
        for folder in ["Policies", "Examples"]:
            shutil.copytree(os.path.join(ROOT, folder), os.path.join(self.root, folder))
        self.process = subprocess.Popen(
            [binary, "playground", "Policies", "--port", "0"],
            cwd=self.root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # The first line, or nothing if the process ends first: either way the read returns.
        line = self.process.stdout.readline()
        prefix = "Playground at http://127.0.0.1:"
        check(line.startswith(prefix) and line.endswith("/\n"), f"the playground printed {line!r} first")
        self.url = line[len("Playground at "):].strip()
        self.port = int(line[len(prefix):].strip().rstrip("/"))
        # Standard error, line by line, as the playground reports what it refused.
        self.errors = []
        self.errors_changed = threading.Condition()
        threading.Thread(target=self.read_errors, daemon=True).start()

    def read_errors(self):
        for line in self.process.stderr:
            with self.errors_changed:
                self.errors.append(line.rstrip("\n"))
                self.errors_changed.notify_all()

    def wait_for_error_line(self, line):
        with self.errors_changed:
            return self.errors_changed.wait_for(lambda: line in self.errors, timeout=WAIT_SECONDS)

    def policy_text(self, name):
        with open(os.path.join(self.root, "Policies", name), encoding="utf-8") as file:
            return file.read()

    def request(self, method, path, headers, body=None):
        """Status and JSON answer of one request; headers are sent as given (Host included)."""
        request = urllib.request.Request(self.url.rstrip("/") + path, data=body, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=WAIT_SECONDS) as answer:
                return answer.status, json.load(answer)
        except urllib.error.HTTPError as error:
            return error.code, json.load(error)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=WAIT_SECONDS)
        shutil.rmtree(self.root, ignore_errors=True)


class OtherOrigin:
    """A page on another origin (another port of 127.0.0.1), to post from."""

    def __init__(self):
        class Blank(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"<!doctype html><title>other origin</title>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Blank)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = next(path for path in CHROMIUM_CANDIDATES if os.access(path, os.X_OK))
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1600,1800", "--no-first-run", "--disable-extensions"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(DRIVER), options=options)


def stale_save_in_two_tabs(driver, wait_for, testid, playground):
    """Tab A and tab B load team-workspace.json; A saves a description; B saves another: 409."""
    from selenium.webdriver.support.ui import Select

    first_tab = driver.current_window_handle
    loaded = playground.policy_text("team-workspace.json")
    driver.switch_to.new_window("tab")
    second_tab = driver.current_window_handle
    driver.get(playground.url)
    wait_for("the second tab's first answers", lambda: testid("status").text == "up to date")
    Select(testid("policy-file")).select_by_value("team-workspace.json")

    def edit_and_save(old, new):
        text = testid("policy-editor").get_attribute("value")
        check(old in text, f"{old!r} is not in the editor")
        driver.execute_script(
            "const editor = arguments[0]; editor.value = arguments[1];"
            "editor.dispatchEvent(new Event('input'));",
            testid("policy-editor"), text.replace(old, new, 1))
        wait_for("save enabled", lambda: testid("save").is_enabled())
        driver.execute_script("arguments[0].textContent = '';", testid("save-status"))
        testid("save").click()
        return text.replace(old, new, 1)

    driver.switch_to.window(first_tab)
    first = edit_and_save('"The Pro template library"', '"The template library of the Pro plan"')
    wait_for("the first tab's save", lambda: testid("save-status").text.startswith("saved team-workspace.json"))
    check(playground.policy_text("team-workspace.json") == first, "the first tab's edit is not on disk")

    driver.switch_to.window(second_tab)
    check(testid("policy-editor").get_attribute("value") == loaded, "the second tab does not hold the loaded text")
    second = edit_and_save('"Anyone holding a seat of a team product sees the shared workspace."',
                           '"Every seat holder sees the shared workspace."')
    wait_for("the conflict", lambda: testid("conflict").is_displayed())
    check(testid("conflict-message").text == "not saved: team-workspace.json changed on disk since the page loaded "
          "it (reload it, or overwrite it on purpose)", f"conflict {testid('conflict-message').text!r}")
    diff = testid("conflict-diff").text.split("\n")
    expected = [
        '-     "team.templates": { "description": "The template library of the Pro plan", "kind": "content" }',
        '+     "team.templates": { "description": "The Pro template library", "kind": "content" }',
        '-       "description": "Anyone holding a seat of a team product sees the shared workspace.",',
        '+       "description": "Every seat holder sees the shared workspace.",',
    ]
    changed = [line for line in diff if line.startswith(("- ", "+ "))]
    check(changed == expected, f"the conflict's diff {diff}")
    check(playground.policy_text("team-workspace.json") == first, "the stale save replaced the first edit")
    testid("conflict-overwrite").click()
    wait_for("the overwrite", lambda: testid("save-status").text.startswith("saved team-workspace.json"))
    check(not testid("conflict").is_displayed(), "the conflict is still shown after overwriting")
    check(playground.policy_text("team-workspace.json") == second, "overwriting on purpose did not write the edit")
    # The one console error of this tab is the browser's note of the 409 itself.
    errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    check(len(errors) == 1 and "api/save" in errors[0] and "409" in errors[0], f"the second tab's console: {errors}")
    driver.close()
    driver.switch_to.window(first_tab)


def share_link_in_a_new_browser(driver, wait_for, testid, playground):
    """Edits the customer, shares, and opens the link in a second browser (a new profile)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    driver.execute_script(
        "const box = arguments[0]; box.value = arguments[1]; box.dispatchEvent(new Event('input'));",
        testid("response-editor"), SHARED_RESPONSE)
    Select(testid("environment")).select_by_value("sandbox")
    testid("entitlements").send_keys("com.example.teams.pro")
    wait_for("the answers to the customer", lambda: testid("status").text == "up to date")

    def snapshot(browser, find):
        """Every file's text in the editor, the customer, the verdict and the tests' summary."""
        menu = Select(find("policy-file"))
        current = menu.first_selected_option.get_attribute("value")
        files = {}
        for name in [option.get_attribute("value") for option in menu.options]:
            menu.select_by_value(name)
            files[name] = find("policy-editor").get_attribute("value")
        menu.select_by_value(current)
        return {
            "current": current, "files": files,
            "response": find("response-editor").get_attribute("value"),
            "response choice": Select(find("response-choice")).first_selected_option.get_attribute("value"),
            "environment": Select(find("environment")).first_selected_option.get_attribute("value"),
            "entitlements": find("entitlements").get_attribute("value"),
            "verdict": find("verdict").text, "decision": find("decision").text,
            # The tests' results, without the line about the test this session added.
            "tests": [line for line in find("tests").text.split("\n") if not line.startswith(("passes: ", "fails: "))],
        }

    shared = snapshot(driver, testid)
    check(shared["files"]["team-workspace.tests.json"] != playground.policy_text("team-workspace.tests.json"),
          "the added test is not in the shared state")
    testid("share").click()
    wait_for("the share link", lambda: testid("share-link").get_attribute("value").startswith(
        playground.url + "#share-v1="))
    link = testid("share-link").get_attribute("value")
    check(driver.current_url == link, f"the page's URL {driver.current_url!r} is not its link")
    engine = testid("engine").text[len("engine "):]

    second = browser()
    try:
        wait = WebDriverWait(second, WAIT_SECONDS, ignored_exceptions=(StaleElementReferenceException,))

        def find(name):
            return second.find_element(By.CSS_SELECTOR, f'[data-testid="{name}"]')

        second.get(link)
        wait.until(lambda _: find("status").text == "up to date")
        check(find("share-status").text == f"restored the shared state (engine {engine})",
              f"the new browser says {find('share-status').text!r}")
        restored = snapshot(second, find)
        differing = [key for key in shared if restored[key] != shared[key]]
        check(differing == [], f"restored differently: {[(key, restored[key], shared[key]) for key in differing]}")

        second.get("about:blank")
        second.get(playground.url + "#share-v9=H4sIAAAAAAAAA6uuBQBDv6ajAgAAAA")
        wait.until(lambda _: find("status").text == "up to date")
        refusal = (f"share link not loaded: it is share format v9, and this page reads v1 (engine {engine}); "
                   "nothing of it was loaded")
        check(find("share-status").text == refusal, f"another format: {find('share-status').text!r}")
        check(find("policy-editor").get_attribute("value") == playground.policy_text("family-sharing.json"),
              "a refused link changed the editor")
        menu = [option.text for option in Select(find("policy-file")).options]
        check(not any(name.endswith("(edited)") for name in menu), f"a refused link left edits: {menu}")

        # A link cut inside an escape, and one whose 100 KB decompress to 100 MB: each refused with
        # its line, the page started whole (its answers come), nothing of the link loaded.
        bomb = base64.urlsafe_b64encode(gzip.compress(b" " * 100_000_000)).decode().rstrip("=")
        for fragment, reason in [
            ("share-v1=H4sI%E0%A4%A", "its fragment holds a '%' that is not a well-formed escape "
                                      "(cut short when copied?)"),
            ("share-v1=" + bomb, f"its state is over {64 * 1024 * 1024} bytes uncompressed"),
        ]:
            second.get("about:blank")
            second.get(playground.url + "#" + fragment)
            wait.until(lambda _: find("status").text == "up to date")
            line = f"share link not loaded: {reason}; nothing of it was loaded"
            check(find("share-status").text == line, f"{fragment[:30]}...: {find('share-status').text!r}")
            check(find("policy-editor").get_attribute("value") == playground.policy_text("family-sharing.json"),
                  "a refused link changed the editor")
        errors = [entry for entry in second.get_log("browser") if entry["level"] == "SEVERE"]
        check(errors == [], f"errors in the new browser's console: {errors}")
    finally:
        second.quit()


def run(binary, screenshot):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import Select, WebDriverWait

    playground = Playground(binary)
    other = OtherOrigin()
    driver = browser()
    # The page redraws each part when its answer comes: an element read as it is replaced is read again.
    wait = WebDriverWait(driver, WAIT_SECONDS, ignored_exceptions=(StaleElementReferenceException,))

    def testid(name):
        return driver.find_element(By.CSS_SELECTOR, f'[data-testid="{name}"]')

    def up_to_date():
        wait.until(lambda _: testid("status").text == "up to date")

    def wait_for(description, predicate):
        try:
            wait.until(lambda _: predicate())
        except Exception as error:
            raise Failure(f"{description}: not seen within {WAIT_SECONDS} s ({type(error).__name__})")

    def texts(selector):
        """The text of each element a selector finds, read at once (the page may redraw it any time)."""
        return driver.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map((node) => node.innerText);", selector)

    def diagnostics():
        return texts('[data-testid="diagnostics"] li')

    def changed_cells():
        return sorted(driver.execute_script(
            "return [...document.querySelectorAll('[data-testid=\"scenario-matrix\"] td[data-changed=\"true\"]')]"
            ".map((cell) => [...cell.parentNode.querySelectorAll('td.scenario')].map((td) => td.innerText)"
            ".concat([cell.dataset.capability]).join(' '));"))

    def verdicts():
        return texts('[data-testid="verdict"]')[0], texts('[data-testid="capability-verdicts"] li')

    def set_editor(text):
        """Replaces the editor's text, as a paste would, and waits for the answers to it."""
        driver.execute_script(
            "const editor = arguments[0]; editor.value = arguments[1]; editor.dispatchEvent(new Event('input'));",
            testid("policy-editor"), text)

    def place_caret(text, after):
        """Puts the editor's caret just after the first `after` in the file, as a click there would."""
        offset = text.index(after) + len(after)
        driver.execute_script(
            "const editor = arguments[0]; editor.focus(); editor.setSelectionRange(arguments[1], arguments[1]);",
            testid("policy-editor"),
            len(text[:offset]),  # JavaScript counts UTF-16 units; the policy is ASCII up to here.
        )

    try:
        # 1. The bundled policies load clean, with a Decision for the first bundled response.
        driver.get(playground.url)
        wait_for("the first answers", lambda: testid("status").text == "up to date")
        files = [option.get_attribute("value") for option in Select(testid("policy-file")).options]
        check(files == ["family-sharing.json", "team-workspace.json", "family-sharing.tests.json",
                        "team-workspace.tests.json"], f"policy and test files {files}")
        check(testid("policy-editor").get_attribute("value") == playground.policy_text("family-sharing.json"),
              "the editor does not hold family-sharing.json as on disk")
        check(diagnostics() == [CLEAN], f"diagnostics {diagnostics()}")
        check("Capabilities: family.member-badge, family.shared-lists, family.space" in testid("decision").text,
              f"decision {testid('decision').text!r}")
        rows = testid("scenario-matrix").find_elements(By.CSS_SELECTOR, "tr")
        check(len(rows) == 22, f"the matrix has {len(rows) - 1} scenario rows, not 21")
        check(changed_cells() == [], f"changed cells before any edit: {changed_cells()}")
        check(testid("tests").text.startswith("19 passed, 0 failed"), f"tests {testid('tests').text!r}")
        print("ok: the bundled policies load clean, with a Decision, the tests and the matrix")

        # 2. A dropped comma: the diagnostic at line 16, column 7, and the line marked.
        Select(testid("policy-file")).select_by_value("team-workspace.json")
        saved = playground.policy_text("team-workspace.json")
        check(testid("policy-editor").get_attribute("value") == saved, "team-workspace.json not shown as on disk")
        place_caret(saved, '"id": "seat-holders-view",')
        testid("policy-editor").send_keys(Keys.BACKSPACE)
        wait_for("the broken JSON's diagnostic", lambda: BROKEN in diagnostics())
        item = testid("diagnostics").find_element(By.CSS_SELECTOR, "li.error")
        check(item.get_attribute("data-line") == "16", f"diagnostic line {item.get_attribute('data-line')}")
        marks = [mark.text for mark in driver.find_elements(By.CSS_SELECTOR, "#gutter .mark.error")]
        check(marks == ["16"], f"marked lines {marks}")
        check(not testid("save").is_enabled(), "save is enabled on an edit with errors")
        print("ok: broken JSON shows its diagnostic at 16:7, and save is disabled")

        # 3. Typing the comma back: clean again.
        testid("policy-editor").send_keys(",")
        wait_for("the fixed JSON checked clean", lambda: diagnostics() == [CLEAN])
        check(testid("policy-editor").get_attribute("value") == saved, "the fixed text differs from the file")
        print("ok: the fixed JSON checks clean")

        # 4. An edited rule: the matrix marks the one cell it changes.
        place_caret(saved, RULE_BEFORE[:-1])
        testid("policy-editor").send_keys(', "workspace.export"')
        edited = saved.replace(RULE_BEFORE, RULE_AFTER, 1)
        wait_for("the edit's changed cell", lambda: changed_cells() == [
            "ORGANIZATION com.example.teams.plus ADMIN workspace.export"])
        up_to_date()
        check(testid("policy-editor").get_attribute("value") == edited, "the editor does not hold the edit")
        check("1 cell changed against the saved files" in testid("matrix-summary").text,
              f"matrix summary {testid('matrix-summary').text!r}")
        check("+       workspace.export  Production   ORGANIZATION" in testid("diff").text,
              f"diff {testid('diff').text!r}")
        check(verdicts() == ("widens", ["workspace.export: widens"]), f"verdict {verdicts()}")
        print("ok: the edited rule marks its one changed cell, the diff names it, and the verdict widens")

        # 5. Explanations: click a granted capability; ask why not for another.
        Select(testid("response-choice")).select_by_value("Examples/organization-admin.json")
        button = '[data-testid="decision"] button[data-capability="workspace.export"]'
        wait_for("the organization admin's decision", lambda: driver.find_elements(By.CSS_SELECTOR, button))
        up_to_date()
        driver.find_element(By.CSS_SELECTOR, button).click()
        wait_for("the explanation of workspace.export", lambda: testid("explanation").text.startswith(
            "capability workspace.export: granted in 1 of 1 group"))
        Select(testid("why-not-capability")).select_by_value("family.space")
        testid("why-not").click()
        wait_for("why not family.space", lambda: testid("explanation").text == (
            "capability family.space: granted in 0 of 1 group\n\ngroup 281474976710656 (ORGANIZATION): not "
            "granted: rule 'family-sharing/family-members-share' needs group type CONSUMER; this group is "
            "ORGANIZATION"))
        print("ok: a capability and a why-not are explained")
        driver.find_element(By.CSS_SELECTOR, button).click()
        wait_for("the explanation again", lambda: testid("explanation").text.startswith(
            "capability workspace.export: granted"))
        if screenshot:
            # The edited rule in view, from the start of its lines.
            driver.execute_script(
                "const editor = arguments[0]; editor.scrollLeft = 0;"
                "editor.scrollTop = arguments[1] * parseFloat(getComputedStyle(editor).lineHeight);"
                "editor.dispatchEvent(new Event('scroll'));",
                testid("policy-editor"), saved[:saved.index(RULE_BEFORE)].count("\n") - 8)
            driver.save_screenshot(screenshot)
            print(f"ok: screenshot {screenshot}")

        # 6. Save: the file on disk changes, and nothing is marked changed any more.
        wait_for("save enabled", lambda: testid("save").is_enabled())
        testid("save").click()
        wait_for("the save", lambda: testid("save-status").text.startswith("saved team-workspace.json"))
        check(playground.policy_text("team-workspace.json") == edited, "the file on disk is not the edit")
        wait_for("no changed cells after saving", lambda: changed_cells() == [])
        wait_for("the verdict against the saved edit", lambda: verdicts() == ("equivalent", []))
        print("ok: save wrote the edit to disk")

        # 6b. Narrowing a rule: the verdict narrows; pinned, the version is the baseline, and going
        # back to the file on disk widens against it.
        set_editor(edited.replace(MEMBERS_BEFORE, MEMBERS_AFTER, 1))
        wait_for("the narrowing verdict", lambda: verdicts() == ("narrows", ["workspace.members: narrows"]))
        check(testid("verdict-baseline").text == "against the files on disk", testid("verdict-baseline").text)
        testid("pin-baseline").click()
        wait_for("the verdict against the pinned version", lambda: verdicts() == ("equivalent", []))
        check(testid("verdict-baseline").text.startswith("against the version pinned at "),
              testid("verdict-baseline").text)
        set_editor(edited)
        wait_for("the verdict against the pinned version", lambda: verdicts() == ("widens", ["workspace.members: widens"]))
        testid("unpin-baseline").click()
        wait_for("the verdict against the files on disk again", lambda: verdicts() == ("equivalent", []))
        print("ok: narrowing a rule narrows; against a pinned version, undoing it widens")

        # 6c. A rule that can never matter: check's warning, in place, its line marked.
        set_editor(edited.replace('    {\n      "id": "pro-admins-manage",', REDUNDANT_RULE + '    {\n      "id": "pro-admins-manage",', 1))
        wait_for("the redundant rule's warning", lambda: diagnostics() == [REDUNDANT])
        item = testid("diagnostics").find_element(By.CSS_SELECTOR, 'li[data-kind="redundant-rule"]')
        check(item.get_attribute("data-line") == "24", f"the warning's line {item.get_attribute('data-line')}")
        marks = driver.execute_script(
            "return [...document.querySelectorAll('#gutter .mark.warning')].map((mark) => mark.textContent);")
        check(marks == ["24"], f"marked lines {marks}")
        set_editor(edited)
        wait_for("the policies clean again", lambda: diagnostics() == [CLEAN])
        print("ok: a redundant rule is warned about at its line")

        # 6d. Tests from a click: a matrix cell pinned in a test, added to the tests file unsaved; the
        # tests run it and it passes; narrowing the rule back makes it fail, with its explanation.
        up_to_date()
        before = texts('[data-testid="tests"] > div')[0]
        check(before == "17 passed, 2 failed", f"tests of the saved edit {testid('tests').text!r}")
        driver.execute_script(
            "const row = [...document.querySelectorAll('[data-testid=\"scenario-matrix\"] tr')].find((tr) =>"
            " [...tr.querySelectorAll('td.scenario')].map((td) => td.innerText).join(' ') ==="
            " 'ORGANIZATION com.example.teams.plus ADMIN');"
            "row.querySelector('td[data-capability=\"workspace.export\"]').click();")
        check(testid("add-test-subject").text == PINNED_SUBJECT, f"add test pins {testid('add-test-subject').text!r}")
        testid("add-test").click()
        wait_for("the added test's run", lambda: texts('[data-testid="pinned-test"]'))
        check(texts('[data-testid="pinned-test"]') == [f"passes: {PINNED_TEST}"], texts('[data-testid="pinned-test"]'))
        check(texts('[data-testid="tests"] > div')[0] == "18 passed, 2 failed", f"tests {testid('tests').text!r}")
        check(testid("add-test-status").text == f"added the test '{PINNED_NAME}' to team-workspace.tests.json "
              "(unsaved: save that file to keep it)", f"add test status {testid('add-test-status').text!r}")
        menu = [option.text for option in Select(testid("policy-file")).options]
        check(menu[3] == "team-workspace.tests.json (edited)", f"file menu {menu}")
        set_editor(saved)
        wait_for("the added test failing", lambda: texts('[data-testid="pinned-test"]') == [f"fails: {PINNED_TEST}"])
        explanations = texts('[data-testid="test-explanation"]')
        check(PINNED_EXPLANATION in explanations, f"the failing test's explanations {explanations}")
        set_editor(edited)
        wait_for("the added test passing again", lambda: texts('[data-testid="pinned-test"]') == [f"passes: {PINNED_TEST}"])
        print("ok: a matrix cell's add test adds a passing test; failing, it shows its explanation")

        # 6e. A share link: the whole state, opened in a new browser, is restored exactly; a link of
        # another format is refused with one line and nothing of it is loaded.
        share_link_in_a_new_browser(driver, wait_for, testid, playground)
        print("ok: a share link restores the whole state in a new browser; another format is refused")

        # 7. The page's console: no error (read before leaving it).
        errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        check(errors == [], f"errors in the browser console: {errors}")
        print("ok: no error in the browser console")

        # 8. Two tabs: the second, loaded before the first saved again, gets 409 and the diff; the
        # first edit stays on disk until the author overwrites on purpose.
        stale_save_in_two_tabs(driver, wait_for, testid, playground)
        print("ok: a stale tab's save gets 409 with what changed, then overwrites on purpose")

        # 8. Refusals: a POST from another origin, in the browser and over HTTP, and a foreign Host.
        before = playground.policy_text("team-workspace.json")
        body = json.dumps({"file": "team-workspace.json", "files": {"team-workspace.json": saved}})
        driver.get(other.url)
        outcome = driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch(arguments[0], {method: 'POST', mode: 'no-cors', body: arguments[1],"
            " headers: {'Content-Type': 'text/plain'}}).then(() => done('sent'), (e) => done('failed: ' + e));",
            playground.url + "api/save", body,
        )
        # The answer is opaque to the other page (or blocked outright, as Chromium's ORB may do with
        # JSON): what counts is that the file, which the posted text would change, stayed as it was.
        check(outcome == "sent" or outcome.startswith("failed: TypeError"), f"the cross-origin fetch: {outcome}")
        expected = f"refused: Origin '{other.url.rstrip('/')}' is not this playground's (http://127.0.0.1:{playground.port})"
        check(playground.wait_for_error_line(f"playground: POST /api/save: {expected}"),
              f"the playground did not report refusing the browser's cross-origin POST: {playground.errors}")
        check(playground.policy_text("team-workspace.json") == before, "a cross-origin POST in the browser saved")
        status, answer = playground.request("POST", "/api/save", {
            "Origin": other.url.rstrip("/"), "Content-Type": "application/json"}, body.encode())
        check((status, answer) == (403, {"error": expected}), f"cross-origin POST answered {status} {answer}")
        check(playground.policy_text("team-workspace.json") == before, "a cross-origin POST saved")
        status, answer = playground.request("GET", "/api/files", {"Host": "rebound.example"})
        expected = f"refused: Host 'rebound.example' is not this playground's loopback address (127.0.0.1:{playground.port})"
        check((status, answer) == (421, {"error": expected}), f"foreign Host answered {status} {answer}")
        print("ok: a cross-origin POST and a foreign Host are refused")
    finally:
        driver.quit()
        other.stop()
        playground.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "debug", "group-policy"))
    parser.add_argument("--screenshot", default=os.path.join(tempfile.gettempdir(), "playground.png"))
    arguments = parser.parse_args()
    # The playground runs in a scratch folder, so a relative path would no longer name the binary.
    arguments.binary = os.path.abspath(arguments.binary)
    arguments.screenshot = os.path.abspath(arguments.screenshot)
    missing = missing_components()
    if missing:
        required = os.environ.get("GROUP_POLICY_REQUIRE_ALL_TESTS") == "1"
        verdict = "FAILED (GROUP_POLICY_REQUIRE_ALL_TESTS=1)" if required else "skipped"
        print(f"playground browser test {verdict}: install {', '.join(missing)}")
        return 1 if required else 0
    if not os.access(arguments.binary, os.X_OK):
        print(f"playground browser test FAILED: no group-policy binary at {arguments.binary} (run swift build)")
        return 1
    try:
        run(arguments.binary, arguments.screenshot)
    except Failure as failure:
        print(f"playground browser test FAILED: {failure}")
        return 1
    print("playground browser test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
