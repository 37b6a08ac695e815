import Foundation

/// A request this server accepts: a method, a path and its decoded query parameters.
struct ServerRequest: Sendable {
    var method: String
    var path: String
    var query: [(name: String, value: String)]

    /// Parses a request head (the request line and header fields, without the final CRLF CRLF).
    ///
    /// - Returns: The request, or the answer to send instead when the head is not one this server
    ///   serves (it takes no bodies, so any announced body is refused).
    static func parse(head: [UInt8]) -> Result<ServerRequest, ServerResponse> {
        // A bare CR or LF, or a NUL, is refused wherever it appears (RFC 9112, sections 2.2 and
        // 5.5): a proxy in front that ends lines at a bare LF would read
        // `X: a\nTransfer-Encoding: chunked` as a second field and send a body this server never
        // reads, and `HTTP/1.1\nContent-Length: 5` as a version and a field.
        if head.indices.contains(where: { index in
            switch head[index] {
            case 0: true
            case 10: index == 0 || head[index - 1] != 13
            case 13: index + 1 == head.count || head[index + 1] != 10
            default: false
            }
        }) {
            return .failure(.error(400, "bad-request", "a bare CR or LF, or a NUL, in the request head"))
        }
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines.first?.split(separator: " ", omittingEmptySubsequences: false) ?? []
        guard requestLine.count == 3, requestLine[2] == "HTTP/1.1" || requestLine[2] == "HTTP/1.0",
            requestLine[1].hasPrefix("/")
        else {
            return .failure(.error(400, "bad-request", "not an HTTP/1.1 request line"))
        }
        for line in lines.dropFirst() {
            // No whitespace in a field name, before the colon above all (RFC 9112, section 5.1):
            // "Content-Length : 5" is refused, never read as some other field while a proxy in
            // front reads a body.
            guard let colon = line.firstIndex(of: ":"),
                !line[..<colon].contains(where: { $0 == " " || $0 == "\t" }), colon != line.startIndex
            else {
                return .failure(.error(400, "bad-request", "malformed header field"))
            }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if name == "transfer-encoding" || (name == "content-length" && value != "0") {
                return .failure(.error(413, "body-not-accepted", "this server takes no request bodies"))
            }
        }
        let target = requestLine[1]
        let path = target.prefix { $0 != "?" }
        var query: [(name: String, value: String)] = []
        for pair in target.dropFirst(path.count + 1).split(separator: "&") {
            let name = pair.prefix { $0 != "=" }
            let value = pair.dropFirst(name.count + 1)
            guard let decodedName = decode(name), let decodedValue = decode(value) else {
                return .failure(.error(400, "bad-request", "malformed percent-encoding in the query"))
            }
            query.append((decodedName, decodedValue))
        }
        return .success(ServerRequest(method: String(requestLine[0]), path: String(path), query: query))
    }

    /// Form decoding: `+` is a space, then percent-decoding.
    private static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}

/// An answer: a status, extra header fields and a JSON body.
struct ServerResponse: Sendable, Error {
    var status: Int
    var headerFields: [(String, String)] = []
    var body: [UInt8]

    /// A JSON answer.
    static func json(_ status: Int, _ body: [UInt8], headerFields: [(String, String)] = []) -> ServerResponse {
        ServerResponse(status: status, headerFields: headerFields, body: body)
    }

    /// An error answer: `{"error":{"code":…,"message":…}}` plus any `details`.
    static func error(
        _ status: Int,
        _ code: String,
        _ message: String,
        details: [(String, JSON)] = [],
        headerFields: [(String, String)] = []
    ) -> ServerResponse {
        let error = JSON.object([("code", .string(code)), ("message", .string(message))] + details)
        return json(status, JSON.object([("error", error)]).bytes, headerFields: headerFields)
    }

    /// The whole HTTP/1.1 message.
    ///
    /// Every answer closes its connection.
    var serialized: [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        head += "Content-Type: application/json; charset=utf-8\r\n"
        head += "Content-Length: \(body.count)\r\n"
        head += "Cache-Control: no-store\r\n"
        head += "Connection: close\r\n"
        for (name, value) in headerFields { head += "\(name): \(value)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 431: "Request Header Fields Too Large"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: "Internal Server Error"
        }
    }
}
