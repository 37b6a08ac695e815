/// A request the server refuses on its own, before or instead of the handler: each application
/// words (and may give the status of) its refusals with ``HTTPHandler/refuse``.
package struct HTTPRefusal: Error, Sendable, Hashable {
    /// What was wrong.
    package enum Kind: Sendable, Hashable {
        /// A new connection while ``HTTPServer/Limits/maximumWaiting`` wait for their heads and none
        /// may be evicted, or one the system took as the server stopped: answered at once.
        case tooManyConnections
        /// A request whose head arrived while ``HTTPServer/Limits/maximumRequests`` are being
        /// answered.
        case tooManyRequests
        /// A body that would take the bodies in flight past
        /// ``HTTPServer/Limits/maximumBodyBytesInFlight``.
        case bodyBytesInFlight
        /// The head (or the body) did not arrive whole within ``HTTPServer/Limits/readTimeout``, or
        /// the connection was evicted to make room for a newer one.
        case requestTimeout
        /// A head longer than ``HTTPServer/Limits/maximumHeadBytes``.
        case headTooLarge
        /// A bare CR or LF, or a NUL, in the head (RFC 9112, sections 2.2 and 5.5).
        case bareLineBreak
        /// Not `METHOD TARGET HTTP/1.1` (or `HTTP/1.0`).
        case malformedRequestLine
        /// A request target that is not a path starting with `/`.
        case targetNotAPath
        /// A header line without a colon, or with nothing before it.
        case fieldWithoutName
        /// Whitespace in a header field's name, before the colon above all (RFC 9112, section 5.1).
        case whitespaceInFieldName
        /// A body announced to a server that takes none (``HTTPServer/Limits/maximumBodyBytes`` 0).
        case bodyNotAccepted
        /// `Transfer-Encoding` on a server that takes bodies by `Content-Length` only.
        case transferEncoding
        /// A `Content-Length` that is not one run of digits, or that is given twice.
        case invalidContentLength
        /// A body longer than ``HTTPServer/Limits/maximumBodyBytes``.
        case bodyTooLarge
        /// The handler did not answer within ``HTTPServer/Limits/handlerTimeout``.
        case handlerTimeout
    }

    package var kind: Kind
    /// The limit the request went past, in bytes (heads, bodies), requests, or seconds (timeouts);
    /// 0 when the kind has none.
    package var limit: Int
    /// The body length the request announced, for ``Kind/bodyTooLarge``; 0 otherwise.
    package var announced: Int = 0

    /// The standard status of the kind: 400, 408, 413, 431, 501, 503 or 504.
    package var status: HTTPStatus {
        switch kind {
        case .tooManyConnections, .tooManyRequests, .bodyBytesInFlight: .serviceUnavailable
        case .requestTimeout: .requestTimeout
        case .headTooLarge: .headerFieldsTooLarge
        case .bareLineBreak, .malformedRequestLine, .targetNotAPath, .fieldWithoutName, .whitespaceInFieldName,
            .invalidContentLength:
            .badRequest
        case .bodyNotAccepted, .bodyTooLarge: .contentTooLarge
        case .transferEncoding: .notImplemented
        case .handlerTimeout: .gatewayTimeout
        }
    }
}
