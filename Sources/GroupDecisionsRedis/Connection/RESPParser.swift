import AppStoreGroups
import GroupDecisions

extension RESPReply {
    /// A command as RESP2 sends it: an array of bulk strings.
    static func command(_ arguments: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = Array("*\(arguments.count)\r\n".utf8)
        for argument in arguments {
            bytes += Array("$\(argument.count)\r\n".utf8)
            bytes += argument
            bytes += [13, 10]
        }
        return bytes
    }
}

/// Reads RESP2 replies from bytes as they arrive, with bounds on what a server may send.
struct RESPParser {
    /// The largest bulk string accepted.
    let maximumBulkBytes: Int
    /// The most elements of one array.
    let maximumArrayCount: Int

    enum Failure: Error, Equatable {
        case malformed(String)
        case tooLarge(String)
    }

    /// The reply at the start of `bytes` and how many bytes it took, or `nil` when more bytes are
    /// needed.
    func parse(_ bytes: ArraySlice<UInt8>, depth: Int = 0) throws(Failure) -> (RESPReply, Int)? {
        guard depth <= 4 else { throw .malformed("replies nested too deeply") }
        guard let type = bytes.first else { return nil }
        guard let lineEnd = Self.lineEnd(in: bytes) else {
            if bytes.count > 1024 { throw .malformed("a reply line longer than 1024 bytes") }
            return nil
        }
        let line = bytes[(bytes.startIndex + 1)..<lineEnd]
        let headerLength = lineEnd + 2 - bytes.startIndex
        switch type {
        case UInt8(ascii: "+"):
            return (.simple(String(decoding: line, as: UTF8.self)), headerLength)
        case UInt8(ascii: "-"):
            return (.error(String(decoding: line, as: UTF8.self)), headerLength)
        case UInt8(ascii: ":"):
            return (.integer(try Self.integer(line)), headerLength)
        case UInt8(ascii: "$"):
            guard let length = try Self.length(line, of: .bulk, limit: maximumBulkBytes) else {
                return (.bulk(nil), headerLength)
            }
            let start = lineEnd + 2
            let end = start + length
            guard bytes.endIndex >= end + 2 else { return nil }
            guard bytes[end] == 13, bytes[end + 1] == 10 else { throw .malformed("a bulk string without CRLF") }
            return (.bulk(Array(bytes[start..<end])), end + 2 - bytes.startIndex)
        case UInt8(ascii: "*"):
            guard let count = try Self.length(line, of: .array, limit: maximumArrayCount) else {
                return (.array(nil), headerLength)
            }
            var elements: [RESPReply] = []
            var offset = headerLength
            for _ in 0..<count {
                guard
                    let (element, length) = try parse(bytes[(bytes.startIndex + offset)...], depth: depth + 1)
                else { return nil }
                elements.append(element)
                offset += length
            }
            return (.array(elements), offset)
        default:
            throw .malformed("an unknown reply type byte \(type)")
        }
    }

    private static func lineEnd(in bytes: ArraySlice<UInt8>) -> Int? {
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            if bytes[index] == 13, bytes[index + 1] == 10 { return index }
            index += 1
        }
        return nil
    }

    /// What a length header counts.
    private enum Counted {
        case bulk, array
    }

    /// A bulk string's or an array's length from its header line: `nil` for -1 (the null value);
    /// another negative length is malformed, and one over `limit` too large.
    private static func length(_ line: ArraySlice<UInt8>, of counted: Counted, limit: Int) throws(Failure) -> Int? {
        let length = try integer(line)
        if length == -1 { return nil }
        guard length >= 0 else { throw .malformed("a negative \(counted == .bulk ? "bulk" : "array") length") }
        guard length <= limit else {
            switch counted {
            case .bulk: throw .tooLarge("a value of \(length) bytes (the limit is \(limit))")
            case .array: throw .tooLarge("an array of \(length) elements (the limit is \(limit))")
            }
        }
        return Int(length)
    }

    private static func integer(_ line: ArraySlice<UInt8>) throws(Failure) -> Int64 {
        guard line.count <= 20, let value = Int64(String(decoding: line, as: UTF8.self)) else {
            throw .malformed("a number that is not one")
        }
        return value
    }
}
