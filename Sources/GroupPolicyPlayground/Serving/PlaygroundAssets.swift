/// The page's files, compiled into the binary from `Web/` (SwiftPM's `.embedInCode`): no bundle
/// to find at run time, no CDN, nothing fetched from anywhere else.
///
/// The page is markup only (`index.html`): its style and its script (ES modules under `js/`) are
/// served from their own paths, so the Content-Security-Policy allows no inline code. The
/// `data-testid` attributes are the page's stable hooks for tests (see the GroupPolicyTooling
/// article "Authoring in the playground").
enum PlaygroundAssets {
    struct Asset: Sendable {
        var contentType: String
        var body: [UInt8]
    }

    private static let html = "text/html; charset=utf-8"
    private static let javaScript = "text/javascript; charset=utf-8"

    /// Each file by the path it is served at.
    static let byPath: [String: Asset] = [
        "/": Asset(contentType: html, body: PackageResources.index_html),
        "/playground.css": Asset(contentType: "text/css; charset=utf-8", body: PackageResources.playground_css),
        "/favicon.svg": Asset(contentType: "image/svg+xml", body: PackageResources.favicon_svg),
        "/js/main.js": Asset(contentType: javaScript, body: PackageResources.main_js),
        "/js/dom.js": Asset(contentType: javaScript, body: PackageResources.dom_js),
        "/js/state.js": Asset(contentType: javaScript, body: PackageResources.state_js),
        "/js/api.js": Asset(contentType: javaScript, body: PackageResources.api_js),
        "/js/editor.js": Asset(contentType: javaScript, body: PackageResources.editor_js),
        "/js/answers.js": Asset(contentType: javaScript, body: PackageResources.answers_js),
        "/js/matrix.js": Asset(contentType: javaScript, body: PackageResources.matrix_js),
        "/js/conflict.js": Asset(contentType: javaScript, body: PackageResources.conflict_js),
        "/js/verdict.js": Asset(contentType: javaScript, body: PackageResources.verdict_js),
        "/js/share.js": Asset(contentType: javaScript, body: PackageResources.share_js),
        "/js/pin.js": Asset(contentType: javaScript, body: PackageResources.pin_js),
    ]
}
