package import GroupPolicyBasics

/// Parses a whole JSON document into a ``JSONNode`` tree, strictly: RFC 8259 grammar, valid UTF-8,
/// no duplicate keys in an object, nesting bounded by `maximumDepth`.
///
/// Recursion depth is bounded by `maximumDepth`, so hostile input cannot exhaust the stack.
package struct JSONReader {
    /// The nesting limit applied when a caller gives none: deep enough for any policy or response
    /// (they nest at most six levels) and far below what the stack could take.
    static let defaultMaximumDepth = 64

    var maximumDepth: Int = JSONReader.defaultMaximumDepth

    /// The path to the value being parsed, kept as a stack so that a syntax error can say where it
    /// is without building a path for every value.
    private var pathStack: [JSONPath.Component] = []

    package init(maximumDepth: Int = JSONReader.defaultMaximumDepth) {
        self.maximumDepth = maximumDepth
    }

    mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) -> JSONNode {
        var scanner = JSONScanner(bytes: bytes)
        pathStack = []
        do throws(JSONSyntaxError) {
            scanner.skipWhitespace()
            guard !scanner.isAtEnd else { throw scanner.error("empty document (expected a JSON value)") }
            let root = try parseValue(&scanner, depth: 0)
            try scanner.expectEnd()
            return root
        } catch {
            var located = error
            located.path = JSONPath(components: pathStack)
            throw located
        }
    }

    package mutating func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONNode {
        var result: Result<JSONNode, JSONSyntaxError> = .failure(JSONSyntaxError(offset: 0, message: "unreachable"))
        bytes.withUnsafeBufferPointer { buffer in
            do throws(JSONSyntaxError) {
                result = .success(try parse(buffer))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    private mutating func parseValue(_ scanner: inout JSONScanner, depth: Int) throws(JSONSyntaxError) -> JSONNode {
        var node = try parseValueContent(&scanner, depth: depth)
        node.end = scanner.position
        return node
    }

    private mutating func parseValueContent(
        _ scanner: inout JSONScanner,
        depth: Int
    ) throws(JSONSyntaxError) -> JSONNode {
        guard let byte = scanner.peekByte() else { throw scanner.error("expected a value, found end of input") }
        let offset = scanner.position
        switch byte {
        case UInt8(ascii: "{"):
            guard depth < maximumDepth else { throw scanner.error("nesting deeper than \(maximumDepth) levels") }
            scanner.position += 1
            var members: [JSONMember] = []
            // Small objects check duplicates linearly; big ones (a policy's `capabilities`) by hash.
            var seenKeys: Set<String> = []
            if scanner.peekByte() == UInt8(ascii: "}") {
                scanner.position += 1
                return JSONNode(offset: offset, value: .object(members))
            }
            // Room for a typical object (a rule, a match) at once, instead of growing 1, 2, 4.
            members.reserveCapacity(4)
            repeat {
                scanner.skipWhitespace()
                let keyOffset = scanner.position
                guard scanner.peekByte() == UInt8(ascii: "\"") else {
                    throw scanner.error("expected a string key, found \(scanner.describeCurrent())")
                }
                let key = try scanner.readString()
                let isDuplicate: Bool
                if members.count < 8 {
                    isDuplicate = members.contains { $0.key.utf8.count == key.utf8.count && $0.key == key }
                } else {
                    if seenKeys.isEmpty { seenKeys = Set(members.map(\.key)) }
                    isDuplicate = !seenKeys.insert(key).inserted
                }
                if isDuplicate {
                    throw scanner.error("duplicate key '\(key)'", at: keyOffset)
                }
                try scanner.expect(UInt8(ascii: ":"), "':' after the key")
                pathStack.append(.key(key))
                let value = try parseValue(&scanner, depth: depth + 1)
                pathStack.removeLast()
                members.append(JSONMember(key: key, keyOffset: keyOffset, value: value))
            } while try scanner.commaOrClose(UInt8(ascii: "}"), "}")
            return JSONNode(offset: offset, value: .object(members))
        case UInt8(ascii: "["):
            guard depth < maximumDepth else { throw scanner.error("nesting deeper than \(maximumDepth) levels") }
            scanner.position += 1
            var elements: [JSONNode] = []
            if scanner.peekByte() == UInt8(ascii: "]") {
                scanner.position += 1
                return JSONNode(offset: offset, value: .array(elements))
            }
            repeat {
                pathStack.append(.index(elements.count))
                elements.append(try parseValue(&scanner, depth: depth + 1))
                pathStack.removeLast()
            } while try scanner.commaOrClose(UInt8(ascii: "]"), "]")
            return JSONNode(offset: offset, value: .array(elements))
        case UInt8(ascii: "\""):
            return JSONNode(offset: offset, value: .string(try scanner.readString()))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return JSONNode(offset: offset, value: .number(try scanner.readNumber()))
        case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
            return JSONNode(offset: offset, value: try scanner.readLiteral())
        default:
            throw scanner.error("expected a value, found \(scanner.describeCurrent())")
        }
    }
}
