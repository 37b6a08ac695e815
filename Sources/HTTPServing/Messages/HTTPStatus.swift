/// An answer's status: its code and the reason phrase written after it.
package struct HTTPStatus: Sendable, Hashable {
    /// The three-digit code.
    package var code: Int
    /// The reason phrase of the status line.
    package var reason: String

    /// A status of this code and reason.
    package init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    /// The status of `code`, with its reason from RFC 9110 (or a generic one for a code it does not
    /// name).
    package init(_ code: Int) {
        self.init(code: code, reason: Self.reasons[code] ?? (code < 500 ? "Client Error" : "Server Error"))
    }

    package static let ok = HTTPStatus(200)
    package static let badRequest = HTTPStatus(400)
    package static let forbidden = HTTPStatus(403)
    package static let notFound = HTTPStatus(404)
    package static let methodNotAllowed = HTTPStatus(405)
    package static let requestTimeout = HTTPStatus(408)
    package static let conflict = HTTPStatus(409)
    package static let contentTooLarge = HTTPStatus(413)
    package static let unsupportedMediaType = HTTPStatus(415)
    package static let misdirectedRequest = HTTPStatus(421)
    package static let unprocessableContent = HTTPStatus(422)
    package static let tooManyRequests = HTTPStatus(429)
    package static let headerFieldsTooLarge = HTTPStatus(431)
    package static let internalServerError = HTTPStatus(500)
    package static let notImplemented = HTTPStatus(501)
    package static let badGateway = HTTPStatus(502)
    package static let serviceUnavailable = HTTPStatus(503)
    package static let gatewayTimeout = HTTPStatus(504)

    private static let reasons: [Int: String] = [
        200: "OK", 204: "No Content", 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden",
        404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout", 409: "Conflict", 413: "Content Too Large",
        415: "Unsupported Media Type", 421: "Misdirected Request", 422: "Unprocessable Content",
        429: "Too Many Requests", 431: "Request Header Fields Too Large", 500: "Internal Server Error",
        501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout",
    ]
}
