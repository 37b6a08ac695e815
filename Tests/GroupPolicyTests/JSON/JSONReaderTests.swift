import GroupPolicyBasics
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

@Suite struct JSONReaderTests {
    func parse(_ bytes: [UInt8], depth: Int = 64) -> Result<JSONNode, JSONSyntaxError> {
        var reader = JSONReader(maximumDepth: depth)
        return Result { () throws(JSONSyntaxError) in try reader.parse(bytes) }
    }

    func error(_ text: String) -> JSONSyntaxError? {
        if case .failure(let error) = parse(bytes(text)) { return error }
        return nil
    }

    @Test func parsesEveryKindOfValueWithOffsets() throws {
        let node = try parse(bytes(#" {"a": [1, -2.5e+3, true, false, null, "x\n\u00e9"], "b": {}} "#)).get()
        guard case .object(let members) = node.value else {
            Issue.record("not an object")
            return
        }
        #expect(node.offset == 1)
        #expect(members.map(\.key) == ["a", "b"])
        #expect(members[0].keyOffset == 2)
        #expect(
            members[0].value.value
                == .array([
                    JSONNode(offset: 8, value: .number("1"), end: 9),
                    JSONNode(offset: 11, value: .number("-2.5e+3"), end: 18),
                    JSONNode(offset: 20, value: .bool(true), end: 24),
                    JSONNode(offset: 26, value: .bool(false), end: 31),
                    JSONNode(offset: 33, value: .null, end: 37),
                    JSONNode(offset: 39, value: .string("x\né"), end: 50),
                ])
        )
    }

    @Test func hugeNumbersStayText() throws {
        let digits = String(repeating: "9", count: 500)
        #expect(
            try parse(bytes("[\(digits)e999999]")).get().value
                == .array([JSONNode(offset: 1, value: .number("\(digits)e999999"), end: 508)])
        )
    }

    @Test func byteOrderMarkIsIgnored() throws {
        #expect(try parse([0xEF, 0xBB, 0xBF] + bytes("{}")).get().value == .object([]))
    }

    struct Bad: CustomTestStringConvertible, Sendable {
        var input: [UInt8]
        var offset: Int
        var message: String
        var testDescription: String { message }
        init(_ text: String, _ offset: Int, _ message: String) {
            self.input = Array(text.utf8)
            self.offset = offset
            self.message = message
        }
        init(bytes: [UInt8], _ offset: Int, _ message: String) {
            self.input = bytes
            self.offset = offset
            self.message = message
        }
    }

    static let bad: [Bad] = [
        Bad("", 0, "empty document (expected a JSON value)"),
        Bad("   ", 3, "empty document (expected a JSON value)"),
        Bad("[01]", 1, "invalid number (leading zero)"),
        Bad("[1.]", 1, "invalid number (digit expected after '.')"),
        Bad("[1e]", 1, "invalid number (digit expected in exponent)"),
        Bad("[-]", 1, "invalid number"),
        Bad("[+1]", 1, "expected a value, found '+'"),
        Bad("[tru]", 1, "invalid literal (expected true, false or null)"),
        Bad("[nullx]", 1, "invalid literal (expected true, false or null)"),
        Bad("[\"a\tb\"]", 3, "control character 0x9 in a string (use an escape)"),
        Bad(#"["\x"]"#, 2, "invalid escape sequence '\\x'"),
        Bad(#"["\ud800"]"#, 2, "high surrogate \\uD800 without a low surrogate"),
        Bad(#"["\udc00"]"#, 2, "lone low surrogate \\uDC00 in a string"),
        Bad(#"["\ud800\u0041"]"#, 2, "high surrogate \\uD800 without a low surrogate"),
        Bad(#"["abc"#, 1, "unterminated string"),
        Bad(#"{"a" 1}"#, 5, "expected ':' after the key, found '1'"),
        Bad(#"{"a":1,}"#, 7, "expected a string key, found '}'"),
        Bad(#"{a:1}"#, 1, "expected a string key, found 'a'"),
        Bad("[1,]", 3, "expected a value, found ']'"),
        Bad("[1 2]", 3, "expected ',' or ']', found '2'"),
        Bad("{} {}", 3, "unexpected '{' after the JSON value"),
        Bad(#"{"a":1,"a":2}"#, 7, "duplicate key 'a'"),
        Bad("// comment\n{}", 0, "expected a value, found '/'"),
        Bad(bytes: [0x5B, 0x22, 0xC0, 0x80, 0x22, 0x5D], 2, "invalid UTF-8 byte 0xC0"),
        Bad(bytes: [0x5B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x5D], 2, "invalid UTF-8 sequence"),
        Bad(bytes: [0x5B, 0x22, 0xF4, 0x90, 0x80, 0x80, 0x22, 0x5D], 2, "invalid UTF-8 sequence"),
        Bad(bytes: [0x5B, 0x22, 0xE2, 0x82], 2, "truncated UTF-8 sequence"),
        Bad(bytes: [0x5B, 0x22, 0xFF, 0x22, 0x5D], 2, "invalid UTF-8 byte 0xFF"),
        Bad(bytes: [0x5B, 0x00, 0x5D], 1, "expected a value, found byte 0x0"),
    ]

    @Test(arguments: bad)
    func rejectsWithOffsetAndReason(_ bad: Bad) {
        guard case .failure(let error) = parse(bad.input) else {
            Issue.record("accepted \(bad.input)")
            return
        }
        #expect(error.offset == bad.offset)
        #expect(error.message == bad.message)
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        guard case .failure(let error) = parse(bytes(deep)) else {
            Issue.record("accepted")
            return
        }
        #expect(error.message == "nesting deeper than 64 levels")
        #expect(error.offset == 64)
        #expect(error.path.description == "[0]" + String(repeating: "[0]", count: 63))
        // The skipping path used for unknown keys in responses is iterative and bounded too.
        let response = #"{"groups":[],"x":"# + deep + "}"
        #expect(throws: GroupPolicyError.self) { try GetCustomerGroupsResponse(jsonBytes: bytes(response)) }
    }

    @Test func syntaxErrorsCarryTheirPath() {
        #expect(error(#"{"rules":[{"id":"a"},{"id":}]}"#)?.path.description == "rules[1].id")
        #expect(error(#"{"capabilities":{"a.b":[}}"#)?.path.description == #"capabilities["a.b"][0]"#)
    }

    @Test func lineAndColumnCountScalars() {
        let source = SourceText(fileName: "f", bytes: bytes("ab\n\u{e9}\u{1F600}x\n"))
        #expect(source.lineAndColumn(ofOffset: 0) == (1, 1))
        #expect(source.lineAndColumn(ofOffset: 3) == (2, 1))
        #expect(source.lineAndColumn(ofOffset: 9) == (2, 3))  // after é (2 bytes) and 😀 (4 bytes)
        #expect(source.lineAndColumn(ofOffset: 10) == (2, 4))
        #expect(source.lineAndColumn(ofOffset: 999) == (3, 1))
    }

    /// Long lines with multi-byte characters across the checkpoints the column lookup starts from,
    /// against a scan from the start of the line.
    @Test(arguments: [0, 1, 255, 256, 257, 511, 512, 1000])
    func lineAndColumnOnLongLines(length: Int) {
        var random = SeededGenerator(seed: UInt64(length) + 1)
        var text = ""
        for _ in 0..<length {
            switch random.next() % 8 {
            case 0: text += "\u{e9}"
            case 1: text += "\u{1F600}"
            case 2: text += "\n"
            case 3: text += "\u{4E2D}"
            default: text += "a"
            }
        }
        let utf8 = bytes(text)
        let source = SourceText(fileName: nil, bytes: utf8)
        var line = 1
        var column = 1
        for offset in 0...utf8.count {
            #expect(source.lineAndColumn(ofOffset: offset) == (line, column), "offset \(offset) of \(utf8.count)")
            guard offset < utf8.count else { break }
            if utf8[offset] == 0x0A {
                line += 1
                column = 1
            } else if utf8[offset] & 0xC0 != 0x80 {
                column += 1
            }
        }
    }
}
