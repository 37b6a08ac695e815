/// The page's files, served from the binary: no CDN, nothing fetched from anywhere else.
enum PlaygroundAssets {
    struct Asset: Sendable {
        var contentType: String
        var body: String
    }

    /// Each file by its path.
    static let byPath: [String: Asset] = [
        "/": Asset(contentType: "text/html; charset=utf-8", body: PlaygroundPage.html),
        "/playground.js": Asset(contentType: "text/javascript; charset=utf-8", body: PlaygroundScript.javaScript),
        "/playground.css": Asset(contentType: "text/css; charset=utf-8", body: PlaygroundStyle.css),
        "/favicon.svg": Asset(contentType: "image/svg+xml", body: PlaygroundPage.icon),
    ]
}
