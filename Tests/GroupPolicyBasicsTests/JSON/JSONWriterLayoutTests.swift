import Testing

@testable import GroupPolicyBasics

/// The writer's layout, exactly: compact, or pretty with two-space indentation and `"key": value`;
/// commas between elements only; empty containers as `[]` and `{}`.
@Suite struct JSONWriterLayoutTests {
    /// One document using every kind of value and member the writer offers.
    static func document(pretty: Bool) -> String {
        var writer = JSONWriter(pretty: pretty)
        writer.beginObject()
        writer.member("a", "x")
        writer.key("b")
        writer.beginArray()
        writer.number(Int64.min)
        writer.bool(true)
        writer.bool(false)
        writer.null()
        writer.endArray()
        writer.key("c")
        writer.beginObject()
        writer.endObject()
        writer.key("d")
        writer.beginArray()
        writer.endArray()
        writer.member("e", orNull: nil)
        writer.member("f", orNull: "y")
        writer.member("g", number: -3)
        writer.member("h", strings: ["p", "q"])
        writer.member("i", strings: [])
        writer.member("j", objects: [1, 2]) { writer, value in writer.member("n", number: value) }
        writer.member("k", array: ["r"]) { writer, value in writer.string(value) }
        writer.endObject()
        return writer.string
    }

    @Test func compact() {
        #expect(
            Self.document(pretty: false)
                == #"{"a":"x","b":[-9223372036854775808,true,false,null],"c":{},"d":[],"e":null,"f":"y","g":-3,"#
                + #""h":["p","q"],"i":[],"j":[{"n":1},{"n":2}],"k":["r"]}"#
        )
    }

    @Test func pretty() {
        #expect(
            Self.document(pretty: true) == """
                {
                  "a": "x",
                  "b": [
                    -9223372036854775808,
                    true,
                    false,
                    null
                  ],
                  "c": {},
                  "d": [],
                  "e": null,
                  "f": "y",
                  "g": -3,
                  "h": [
                    "p",
                    "q"
                  ],
                  "i": [],
                  "j": [
                    {
                      "n": 1
                    },
                    {
                      "n": 2
                    }
                  ],
                  "k": [
                    "r"
                  ]
                }
                """
        )
    }

    /// A value at the top level has no line break before it; nesting deeper than the writer's
    /// 64-space run still indents two spaces a level.
    @Test func topLevelValuesAndDeepNesting() {
        var scalar = JSONWriter(pretty: true)
        scalar.string("x")
        #expect(scalar.string == #""x""#)
        let depth = 40
        var writer = JSONWriter(pretty: true)
        for _ in 0..<depth { writer.beginArray() }
        writer.number(0)
        for _ in 0..<depth { writer.endArray() }
        let lines = writer.string.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == 2 * depth + 1)
        #expect(lines[0] == "[")
        #expect(lines[depth - 1] == String(repeating: " ", count: 2 * (depth - 1)) + "[")
        #expect(lines[depth] == String(repeating: " ", count: 2 * depth) + "0")
        #expect(lines[depth + 1] == String(repeating: " ", count: 2 * (depth - 1)) + "]")
        #expect(lines[2 * depth] == "]")
        #expect(writer.output.count == 2 * depth * (depth + 1) + 1 + 2 * depth)
    }
}
