/// One answer: a status, a content type, header fields of its own and a body.
///
/// The server adds `Content-Length`, the header fields every answer of the server carries
/// (``HTTPServer/Configuration/commonHeaderFields``) and `Connection` when it writes it.
package struct HTTPResponse: Sendable {
    package var status: HTTPStatus
    package var contentType: String
    /// Header fields of this answer only, written after the common ones.
    package var headerFields: [(name: String, value: String)]
    package var body: [UInt8]

    /// An answer of these parts.
    package init(
        status: HTTPStatus = .ok,
        contentType: String,
        headerFields: [(name: String, value: String)] = [],
        body: [UInt8]
    ) {
        self.status = status
        self.contentType = contentType
        self.headerFields = headerFields
        self.body = body
    }

    /// An answer whose body is this text's UTF-8.
    package init(
        status: HTTPStatus = .ok,
        contentType: String,
        headerFields: [(name: String, value: String)] = [],
        body: String
    ) {
        self.init(status: status, contentType: contentType, headerFields: headerFields, body: Array(body.utf8))
    }
}
