/// Reading a request head: where it ends, and what it says.
extension HTTPRequest {
    /// What a complete head says about the rest of the exchange.
    struct Parsed {
        var request: HTTPRequest
        /// The body's length in bytes (0 without one).
        var bodyLength: Int
        /// Whether the client keeps the connection open after the answer (HTTP/1.1 unless it says
        /// `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`).
        var keepAlive: Bool
    }

    /// Where a head ends, or where it breaks the line rules.
    enum Boundary: Equatable {
        /// The offset of the CR LF CR LF that ends the head.
        case end(Int)
        /// A bare LF, a CR followed by anything but LF, or a NUL: refused whatever follows (at once,
        /// rather than after the read timeout: a head with LF-only line ends never has the
        /// CR LF CR LF that would end it).
        case broken
    }

    /// Where the head in `bytes` ends or breaks, looking from `start` (bytes before it were looked
    /// at already and are neither); `nil` while neither has arrived.
    static func boundary(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Boundary? {
        var index = start
        let count = bytes.count
        while index < count {
            switch bytes[index] {
            case 0:
                return .broken
            case 10:
                if index == 0 || bytes[index - 1] != 13 { return .broken }
                if index >= 3, bytes[index - 2] == 10, bytes[index - 3] == 13 { return .end(index - 3) }
            case 13:
                if index + 1 < count, bytes[index + 1] != 10 { return .broken }
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// Where to look again once more bytes have come, after `boundary` found neither in `count`
    /// bytes: a CR at the end is judged by the byte after it.
    static func resumePoint(after count: Int) -> Int {
        max(0, count - 1)
    }

    /// Parses a complete head (without its CR LF CR LF) and its framing.
    ///
    /// - Parameters:
    ///   - head: The request line and fields.
    ///   - maximumBodyBytes: 0 for a server that takes no bodies: any announced body is refused;
    ///     otherwise the longest `Content-Length` taken.
    /// - Returns: The request, its body's length and whether the connection stays open.
    /// - Throws: The refusal the head earns.
    static func parse(_ head: UnsafeBufferPointer<UInt8>, maximumBodyBytes: Int) throws(HTTPRefusal) -> Parsed {
        let bytes = Array(head)
        var lineEnd = 0
        while lineEnd < bytes.count, bytes[lineEnd] != 13 { lineEnd += 1 }
        // METHOD SP TARGET SP VERSION: exactly two spaces.
        var spaces: [Int] = []
        for index in 0..<lineEnd where bytes[index] == 32 {
            spaces.append(index)
            if spaces.count > 2 { break }
        }
        guard spaces.count == 2 else { throw HTTPRefusal(kind: .malformedRequestLine, limit: 0) }
        let version = bytes[(spaces[1] + 1)..<lineEnd]
        let isHTTP10 = version.elementsEqual("HTTP/1.0".utf8)
        guard isHTTP10 || version.elementsEqual("HTTP/1.1".utf8), spaces[0] > 0 else {
            throw HTTPRefusal(kind: .malformedRequestLine, limit: 0)
        }
        let targetStart = spaces[0] + 1
        guard targetStart < spaces[1], bytes[targetStart] == UInt8(ascii: "/") else {
            throw HTTPRefusal(kind: .targetNotAPath, limit: 0)
        }
        var pathEnd = targetStart
        while pathEnd < spaces[1], bytes[pathEnd] != UInt8(ascii: "?") { pathEnd += 1 }
        let query = pathEnd < spaces[1] ? (pathEnd + 1)..<spaces[1] : spaces[1]..<spaces[1]
        let fieldsStart = min(lineEnd + 2, bytes.count)

        // The fields' syntax first, then the framing they announce.
        var contentLengths: [ArraySlice<UInt8>] = []
        var transferEncoding = false
        var close = false
        var keepAliveAsked = false
        var start = fieldsStart
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != 13 { end += 1 }
            guard let colon = bytes[start..<end].firstIndex(of: UInt8(ascii: ":")), colon != start else {
                throw HTTPRefusal(kind: .fieldWithoutName, limit: 0)
            }
            let name = bytes[start..<colon]
            if name.contains(where: { $0 == 32 || $0 == 9 }) {
                throw HTTPRefusal(kind: .whitespaceInFieldName, limit: 0)
            }
            let value = trimmed(bytes[(colon + 1)..<end])
            if equalsIgnoringCase(name, "content-length") {
                contentLengths.append(value)
            } else if equalsIgnoringCase(name, "transfer-encoding") {
                transferEncoding = true
            } else if equalsIgnoringCase(name, "connection") {
                for token in value.split(separator: UInt8(ascii: ",")) {
                    let token = trimmed(token)
                    if equalsIgnoringCase(token, "close") { close = true }
                    if equalsIgnoringCase(token, "keep-alive") { keepAliveAsked = true }
                }
            }
            start = end + 2
        }
        var bodyLength = 0
        if maximumBodyBytes == 0 {
            if transferEncoding || contentLengths.contains(where: { !$0.elementsEqual("0".utf8) }) {
                throw HTTPRefusal(kind: .bodyNotAccepted, limit: 0)
            }
        } else {
            if transferEncoding { throw HTTPRefusal(kind: .transferEncoding, limit: 0) }
            if let first = contentLengths.first {
                guard contentLengths.count == 1, !first.isEmpty, first.count <= 18,
                    first.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
                else { throw HTTPRefusal(kind: .invalidContentLength, limit: 0) }
                bodyLength = first.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
                guard bodyLength <= maximumBodyBytes else {
                    throw HTTPRefusal(kind: .bodyTooLarge, limit: maximumBodyBytes, announced: bodyLength)
                }
            }
        }
        let request = HTTPRequest(
            head: bytes,
            method: String(decoding: bytes[0..<spaces[0]], as: UTF8.self),
            path: String(decoding: bytes[targetStart..<pathEnd], as: UTF8.self),
            query: query,
            fieldsStart: fieldsStart,
            isHTTP10: isHTTP10
        )
        return Parsed(
            request: request,
            bodyLength: bodyLength,
            keepAlive: isHTTP10 ? keepAliveAsked && !close : !close
        )
    }
}
