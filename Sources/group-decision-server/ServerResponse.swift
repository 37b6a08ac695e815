import HTTPServing

/// An answer of the server: a status, extra header fields and a JSON body; thrown by the routes
/// for a refusal.
struct ServerResponse: Sendable, Error {
    var status: Int
    var headerFields: [(name: String, value: String)] = []
    var body: [UInt8]
    var contentType = "application/json; charset=utf-8"

    /// A JSON answer.
    static func json(
        _ status: Int,
        _ body: [UInt8],
        headerFields: [(name: String, value: String)] = []
    ) -> ServerResponse {
        ServerResponse(status: status, headerFields: headerFields, body: body)
    }

    /// An error answer: `{"error":{"code":…,"message":…}}` plus any `details`.
    static func error(
        _ status: Int,
        _ code: String,
        _ message: String,
        details: [(String, JSON)] = [],
        headerFields: [(name: String, value: String)] = []
    ) -> ServerResponse {
        let error = JSON.object([("code", .string(code)), ("message", .string(message))] + details)
        return json(status, JSON.object([("error", error)]).bytes, headerFields: headerFields)
    }

    /// The answer as the HTTP layer writes it (it adds `Content-Length`, `Cache-Control` and,
    /// when the connection closes, `Connection`).
    var http: HTTPResponse {
        HTTPResponse(status: HTTPStatus(status), contentType: contentType, headerFields: headerFields, body: body)
    }

    /// The server's refusals in its own words: the error body every other failure has.
    @Sendable static func refusal(_ refusal: HTTPRefusal) -> HTTPResponse {
        let response: ServerResponse =
            switch refusal.kind {
            case .tooManyConnections, .tooManyRequests, .bodyBytesInFlight:
                .error(503, "busy", "too many connections; try again")
            case .requestTimeout: .error(408, "request-timeout", "the request did not arrive in time")
            case .headTooLarge: .error(431, "request-too-large", "the request head is over \(refusal.limit) bytes")
            case .bareLineBreak: .error(400, "bad-request", "a bare CR or LF, or a NUL, in the request head")
            case .malformedRequestLine, .targetNotAPath: .error(400, "bad-request", "not an HTTP/1.1 request line")
            case .fieldWithoutName, .whitespaceInFieldName, .invalidContentLength:
                .error(400, "bad-request", "malformed header field")
            case .bodyNotAccepted, .transferEncoding, .bodyTooLarge:
                .error(413, "body-not-accepted", "this server takes no request bodies")
            case .handlerTimeout:
                .error(504, "timeout", "no answer within the server's time limit; nothing is granted")
            }
        return response.http
    }
}
