/// One HTTP/1.1 request as the playground reads it: the request line, the headers by lowercased
/// name, and the body, each within a bound.
struct HTTPRequest: Sendable {
    var method: String
    /// The request target's path, without its query.
    var path: String
    /// Each header's value by lowercased name; a repeated header keeps every value.
    var headers: [String: [String]]
    var body: [UInt8]

    /// The one value of a header, `nil` when it is missing; a repeated header counts as missing
    /// values of its own, so callers see `nil` and refuse.
    func header(_ name: String) -> String? {
        guard let values = headers[name], values.count == 1 else { return nil }
        return values[0]
    }

    /// Parses the head (request line and headers, without the blank line that ends them).
    static func parseHead(_ head: [UInt8]) throws(HTTPConnection.Failure) -> HTTPRequest {
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = lines.first.map { $0.split(separator: " ", omittingEmptySubsequences: false) } ?? []
        guard requestLine.count == 3, requestLine[2] == "HTTP/1.1" || requestLine[2] == "HTTP/1.0" else {
            throw HTTPConnection.Failure(status: .badRequest, message: "not an HTTP/1.1 request line")
        }
        let target = requestLine[1]
        guard target.hasPrefix("/") else {
            throw HTTPConnection.Failure(
                status: .badRequest,
                message: "the request target must be a path starting with '/'"
            )
        }
        var headers: [String: [String]] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else {
                throw HTTPConnection.Failure(status: .badRequest, message: "a header line without a name")
            }
            let name = line[..<colon].lowercased()
            guard !name.contains(where: { $0 == " " || $0 == "\t" }) else {
                throw HTTPConnection.Failure(status: .badRequest, message: "whitespace in a header name")
            }
            let value = line[line.index(after: colon)...].trimmed(of: [" ", "\t"])
            headers[name, default: []].append(value)
        }
        let path = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        return HTTPRequest(method: String(requestLine[0]), path: String(path), headers: headers, body: [])
    }

    /// The body's length from `Content-Length` (digits only), at most `maximum`; a chunked body is
    /// refused.
    func bodyLength(maximum: Int) throws(HTTPConnection.Failure) -> Int {
        if headers["transfer-encoding"] != nil {
            throw HTTPConnection.Failure(
                status: .notImplemented,
                message: "Transfer-Encoding is not supported; send Content-Length"
            )
        }
        guard let values = headers["content-length"] else { return 0 }
        guard values.count == 1, values[0].allSatisfy({ $0.isASCII && $0.isNumber }), let length = Int(values[0]) else {
            throw HTTPConnection.Failure(status: .badRequest, message: "an invalid Content-Length")
        }
        guard length <= maximum else {
            throw HTTPConnection.Failure(
                status: .contentTooLarge,
                message: "request body of \(length) bytes is over the limit of \(maximum) bytes"
            )
        }
        return length
    }
}

extension StringProtocol {
    fileprivate func trimmed(of set: Set<Character>) -> String {
        var slice = Substring(self)
        while let first = slice.first, set.contains(first) { slice.removeFirst() }
        while let last = slice.last, set.contains(last) { slice.removeLast() }
        return String(slice)
    }
}
