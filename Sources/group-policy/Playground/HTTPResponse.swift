import GroupPolicyBasics

/// The statuses the playground answers with.
struct HTTPStatus: Sendable, Hashable {
    var code: Int
    var reason: String

    static let ok = HTTPStatus(code: 200, reason: "OK")
    static let badRequest = HTTPStatus(code: 400, reason: "Bad Request")
    static let forbidden = HTTPStatus(code: 403, reason: "Forbidden")
    static let notFound = HTTPStatus(code: 404, reason: "Not Found")
    static let methodNotAllowed = HTTPStatus(code: 405, reason: "Method Not Allowed")
    static let requestTimeout = HTTPStatus(code: 408, reason: "Request Timeout")
    static let contentTooLarge = HTTPStatus(code: 413, reason: "Content Too Large")
    static let unsupportedMediaType = HTTPStatus(code: 415, reason: "Unsupported Media Type")
    static let misdirectedRequest = HTTPStatus(code: 421, reason: "Misdirected Request")
    static let unprocessableContent = HTTPStatus(code: 422, reason: "Unprocessable Content")
    static let headerFieldsTooLarge = HTTPStatus(code: 431, reason: "Request Header Fields Too Large")
    static let internalServerError = HTTPStatus(code: 500, reason: "Internal Server Error")
    static let notImplemented = HTTPStatus(code: 501, reason: "Not Implemented")
    static let serviceUnavailable = HTTPStatus(code: 503, reason: "Service Unavailable")
}

/// One answer: a status, a content type and a body; the security headers every answer carries are
/// added when it is written.
struct HTTPResponse: Sendable {
    var status: HTTPStatus
    var contentType: String
    var body: [UInt8]
    var extraHeaders: [(String, String)] = []

    init(status: HTTPStatus = .ok, contentType: String, body: String) {
        self.status = status
        self.contentType = contentType
        self.body = Array(body.utf8)
    }

    /// JSON text.
    static func json(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json; charset=utf-8", body: text)
    }

    /// `{"error": "…"}`: one line, as the CLI prints it after `Error: `.
    static func error(_ message: String, status: HTTPStatus) -> HTTPResponse {
        json(PlaygroundJSON.object(["error": PlaygroundJSON.string(message.escapingControlCharacters)]), status: status)
    }

    /// The Content-Security-Policy of every answer: the page's own origin for its script, style,
    /// icon and requests, and nothing from anywhere else; no inline script or style, no framing,
    /// no form posting anywhere.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The bytes on the wire: the status line, the headers, a blank line and the body.
    func serialized() -> [UInt8] {
        var headers: [(String, String)] = [
            ("Content-Type", contentType),
            ("Content-Length", String(body.count)),
            ("Content-Security-Policy", Self.contentSecurityPolicy),
            ("X-Content-Type-Options", "nosniff"),
            ("X-Frame-Options", "DENY"),
            ("Referrer-Policy", "no-referrer"),
            ("Cross-Origin-Resource-Policy", "same-origin"),
            ("Cache-Control", "no-store"),
            ("Connection", "close"),
        ]
        headers += extraHeaders
        var head = "HTTP/1.1 \(status.code) \(status.reason)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        return Array(head.utf8) + body
    }
}
