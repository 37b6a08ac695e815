import GroupPolicy
import GroupPolicyBasics

/// Reads a shadow report's JSON in one pass over its bytes, building only the report: no tree of
/// the document, so memory stays a small multiple of the input however the input is shaped.
///
/// It keeps the JSON reader's rules (RFC 8259, valid UTF-8, no duplicate key in an object, nesting
/// at most `PolicyLimits.maximumDepth` levels) and its messages, and reads the whole document even
/// after a problem, so that it reports what reading the document as a tree reported: the syntax
/// error if the document is not JSON, otherwise the report's first problem in the file.
struct ShadowReportReader {
    /// A problem with the report's values, located.
    struct Problem: Error {
        var offset: Int
        var path: JSONPath
        var message: String
    }

    /// What a JSON value is, from its first byte.
    enum Kind {
        case object, array, string, number, boolean, null

        /// The type's name for "expected X, found Y" messages, as the JSON tree names them.
        var name: String {
            switch self {
            case .null: "null"
            case .boolean: "a boolean"
            case .number: "a number"
            case .string: "a string"
            case .array: "an array"
            case .object: "an object"
            }
        }
    }

    /// An object that was read: where it starts, and which of its allowed keys it had.
    struct ObjectRead {
        var offset: Int
        var path: JSONPath
        var seen: UInt64

        func has(_ index: Int) -> Bool { seen & (1 << UInt64(index)) != 0 }
    }

    static let maximumDepth = PolicyLimits.default.maximumDepth

    var scanner: JSONScanner
    /// The path to the value being read, as the JSON reader keeps it: the key of each member and
    /// the index of each element being read.
    private(set) var path: [JSONPath.Component] = []
    /// The problem at the smallest offset so far; the first one reported among those at one offset.
    private(set) var problem: Problem?
    /// The keys of the object open at each depth.
    private var keys: [KeySet] = []

    init(bytes: UnsafeBufferPointer<UInt8>) {
        scanner = JSONScanner(bytes: bytes)
    }

    var currentPath: JSONPath { JSONPath(components: path) }

    /// Records a problem with the value being read (at ``currentPath``) unless one at the same
    /// offset or before it is already recorded; the message is only built when it is.
    mutating func fail(at offset: Int, _ message: @autoclosure () -> String) {
        if let problem, problem.offset <= offset { return }
        problem = Problem(offset: offset, path: currentPath, message: message())
    }

    /// ``fail(at:_:)`` with a path of its own.
    mutating func fail(at offset: Int, path: @autoclosure () -> JSONPath, _ message: @autoclosure () -> String) {
        if let problem, problem.offset <= offset { return }
        problem = Problem(offset: offset, path: path(), message: message())
    }

    /// Reports that the value at the cursor is not `expected`, and skips it.
    mutating func wrongType(_ kind: Kind, expected: String, depth: Int) throws(JSONSyntaxError) {
        fail(at: scanner.position, "expected \(expected), found \(kind.name)")
        try skipValue(depth: depth)
    }

    /// The kind of the value at the cursor (after whitespace), or the JSON reader's error when no
    /// value starts there.
    mutating func peekKind() throws(JSONSyntaxError) -> Kind {
        guard let byte = scanner.peekByte() else { throw scanner.error("expected a value, found end of input") }
        switch byte {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .boolean
        case UInt8(ascii: "n"): return .null
        default: throw scanner.error("expected a value, found \(scanner.describeCurrent())")
        }
    }

    /// Reads an object at `depth` member by member; `nil` when the value is not an object (reported
    /// and skipped).
    ///
    /// `member` reads the value of the allowed key at its index (the cursor at the value, the path
    /// ending in the key); other keys are reported and their values skipped.
    mutating func readObject(
        depth: Int,
        allowed: [String],
        _ member: (inout Self, Int) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) -> ObjectRead? {
        let kind = try peekKind()
        guard kind == .object else {
            try wrongType(kind, expected: "an object", depth: depth)
            return nil
        }
        var object = ObjectRead(offset: scanner.position, path: currentPath, seen: 0)
        try forEachMember(depth: depth) { reader, key, keyOffset throws(JSONSyntaxError) in
            // Lengths first: `==` on unequal strings takes a slow path, and most keys differ in length.
            if let index = allowed.firstIndex(where: { $0.utf8.count == key.utf8.count && $0 == key }) {
                object.seen |= 1 << UInt64(index)
                try member(&reader, index)
            } else {
                reader.fail(at: keyOffset, Self.unknownKey(key, allowed: allowed))
                try reader.skipValue(depth: depth + 1)
            }
        }
        return object
    }

    /// The same message the strict formats give for an unknown key, with its suggestion.
    private static func unknownKey(_ key: String, allowed: [String]) -> String {
        let suggestion = Suggestion.closest(to: key, among: allowed).map { " (did you mean '\($0)'?)" } ?? ""
        return "unknown key '\(key)'\(suggestion); allowed: \(allowed.joined(separator: ", "))"
    }

    /// Reports the keys of `allowed` that `object` lacks, but for the `optional` ones, at the
    /// object, in their order.
    mutating func requireKeys(_ object: ObjectRead, _ allowed: [String], optional: Set<String> = []) {
        for (index, key) in allowed.enumerated() where !object.has(index) && !optional.contains(key) {
            fail(at: object.offset, path: object.path.appending(key), "missing required key '\(key)'")
        }
    }

    /// Reads an array at `depth`; `false` when the value is not an array (reported as not an array
    /// of `noun`, and skipped).
    ///
    /// `element` reads the element at each index (the cursor at it, the path ending in the index)
    /// and says whether to go on: after `false`, the rest of the array is only skipped.
    mutating func readArray(
        depth: Int,
        of noun: String,
        _ element: (inout Self, Int) throws(JSONSyntaxError) -> Bool
    ) throws(JSONSyntaxError) -> Bool {
        let kind = try peekKind()
        guard kind == .array else {
            try wrongType(kind, expected: "an array of \(noun)", depth: depth)
            return false
        }
        try forEachElement(depth: depth, element)
        return true
    }

    /// Skips the value at the cursor, checking it as the JSON reader would (its syntax, duplicate
    /// keys, nesting), without keeping any of it.
    mutating func skipValue(depth: Int) throws(JSONSyntaxError) {
        switch try peekKind() {
        case .object:
            try forEachMember(depth: depth) { reader, _, _ throws(JSONSyntaxError) in
                try reader.skipValue(depth: depth + 1)
            }
        case .array:
            try forEachElement(depth: depth) { reader, _ throws(JSONSyntaxError) in
                try reader.skipValue(depth: depth + 1)
                return false
            }
        case .string: _ = try scanner.readRawString()
        case .number: _ = try scanner.readNumber()
        case .boolean, .null: _ = try scanner.readLiteral()
        }
    }

    /// The object at the cursor, member by member, as the JSON reader parses one: `body` reads
    /// each value, the path ending in its key.
    private mutating func forEachMember(
        depth: Int,
        _ body: (inout Self, String, Int) throws(JSONSyntaxError) -> Void
    ) throws(JSONSyntaxError) {
        try enter(depth)
        if keys.count <= depth { keys.append(contentsOf: repeatElement(KeySet(), count: depth + 1 - keys.count)) }
        keys[depth].reset()
        if scanner.peekByte() == UInt8(ascii: "}") {
            scanner.position += 1
            return
        }
        repeat {
            scanner.skipWhitespace()
            let keyOffset = scanner.position
            guard scanner.peekByte() == UInt8(ascii: "\"") else {
                throw scanner.error("expected a string key, found \(scanner.describeCurrent())")
            }
            let key = try scanner.readString()
            guard keys[depth].insert(key, at: keyOffset + 1, in: scanner.bytes) else {
                throw scanner.error("duplicate key '\(key)'", at: keyOffset)
            }
            try scanner.expect(UInt8(ascii: ":"), "':' after the key")
            path.append(.key(key))
            try body(&self, key, keyOffset)
            path.removeLast()
        } while try scanner.commaOrClose(UInt8(ascii: "}"), "}")
    }

    /// The array at the cursor, element by element: `body` reads each, the path ending in its index,
    /// until it returns `false`; the elements after that are skipped.
    private mutating func forEachElement(
        depth: Int,
        _ body: (inout Self, Int) throws(JSONSyntaxError) -> Bool
    ) throws(JSONSyntaxError) {
        try enter(depth)
        if scanner.peekByte() == UInt8(ascii: "]") {
            scanner.position += 1
            return
        }
        var index = 0
        var reading = true
        repeat {
            path.append(.index(index))
            if reading {
                reading = try body(&self, index)
            } else {
                try skipValue(depth: depth + 1)
            }
            path.removeLast()
            index += 1
        } while try scanner.commaOrClose(UInt8(ascii: "]"), "]")
    }

    /// Steps into the container at the cursor, at `depth` (the root's is 0).
    private mutating func enter(_ depth: Int) throws(JSONSyntaxError) {
        guard depth < Self.maximumDepth else { throw scanner.error("nesting deeper than \(Self.maximumDepth) levels") }
        scanner.position += 1
    }
}
