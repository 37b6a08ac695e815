/// The playground's page.
///
/// Markup only: its script and style are served from their own paths, so the
/// Content-Security-Policy allows no inline code. The `data-testid` attributes are the page's
/// stable hooks for tests (see the DocC article "Authoring in the playground").
enum PlaygroundPage {
    static let html = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>GroupPolicy playground</title>
        <link rel="icon" href="/favicon.svg" type="image/svg+xml">
        <link rel="stylesheet" href="/playground.css">
        <script src="/playground.js" defer></script>
        </head>
        <body>
        <header>
          <h1>GroupPolicy playground</h1>
          <span id="directory" class="muted"></span>
          <span id="status" data-testid="status" class="muted"></span>
        </header>
        <main>
          <section class="pane">
            <div class="toolbar">
              <label>Policy file <select id="file" data-testid="policy-file"></select></label>
              <button id="save" data-testid="save" disabled>Save</button>
              <span id="save-status" data-testid="save-status" class="muted"></span>
            </div>
            <div class="editor">
              <pre id="gutter" aria-hidden="true"></pre>
              <textarea id="policy" data-testid="policy-editor" spellcheck="false" wrap="off" aria-label="Policy file"></textarea>
            </div>
            <h2>Diagnostics</h2>
            <ul id="diagnostics" data-testid="diagnostics"></ul>
          </section>
          <section class="pane">
            <h2>Customer</h2>
            <label>Response <select id="response-choice" data-testid="response-choice"></select></label>
            <textarea id="response" data-testid="response-editor" spellcheck="false" wrap="off" aria-label="Response JSON"></textarea>
            <div class="row">
              <label>Environment
                <select id="environment" data-testid="environment">
                  <option value="production">Production</option>
                  <option value="sandbox">Sandbox</option>
                </select>
              </label>
              <label class="grow">Verified entitlements
                <input id="entitlements" data-testid="entitlements" placeholder="com.example.teams.pro, …">
              </label>
            </div>
            <h2>Decision</h2>
            <div id="decision" data-testid="decision"></div>
            <div class="row">
              <label class="grow">Why not? <select id="why-not-capability" data-testid="why-not-capability"></select></label>
              <button id="why-not" data-testid="why-not">Explain</button>
            </div>
            <h2>Explanation</h2>
            <pre id="explanation" data-testid="explanation" class="muted">Click a capability, or ask why not.</pre>
          </section>
          <section class="pane">
            <h2>Policy tests</h2>
            <div id="tests" data-testid="tests"></div>
          </section>
          <section class="pane wide">
            <h2>Scenario matrix</h2>
            <p id="matrix-summary" data-testid="matrix-summary" class="muted"></p>
            <div id="scenario-matrix" data-testid="scenario-matrix"></div>
            <h2>Changes against the saved files</h2>
            <pre id="diff" data-testid="diff"></pre>
          </section>
        </main>
        </body>
        </html>

        """

    /// The tab's icon, so the browser finds one (a missing icon is an error in its console).
    static let icon = """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">\
        <rect width="16" height="16" rx="3" fill="#1f6feb"/>\
        <path d="M4 8h8M8 4v8" stroke="#fff" stroke-width="2"/></svg>

        """
}
