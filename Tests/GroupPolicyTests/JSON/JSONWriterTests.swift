import Testing

@testable import GroupPolicy

/// The writer's string escaping, exactly: runs without escapes are copied whole, so the cases put
/// escapes at the start, the end, next to each other and between runs.
@Suite struct JSONWriterTests {
    @Test(
        arguments: [
            ("", #""""#),
            ("plain", #""plain""#),
            ("\"", #""\"""#),
            ("a\"b\\c", #""a\"b\\c""#),
            ("\n\r\t\u{8}\u{c}", #""\n\r\t\b\f""#),
            ("x\u{1}y\u{1f}", #""x\u0001y\u001f""#),
            ("\u{e9}t\u{e9} \u{1F600}/", "\"\u{e9}t\u{e9} \u{1F600}/\""),
            ("end\\", #""end\\""#),
        ]
    )
    func escapesStrings(text: String, json: String) {
        var writer = JSONWriter(pretty: false)
        writer.string(text)
        #expect(writer.string == json)
    }

    /// Round trip through the strict reader for every control character and the two escapes.
    @Test func everyControlCharacterRoundTrips() throws {
        let text = String(decoding: (0..<0x20).map { UInt8($0) } + Array("\"\\ok".utf8), as: UTF8.self)
        var writer = JSONWriter(pretty: true)
        writer.beginArray()
        writer.string(text)
        writer.endArray()
        let response = try GetCustomerGroupsResponse(
            jsonBytes: Array(#"{"groups":[{"groupId":"#.utf8) + writer.output.dropFirst(4).dropLast(2)
                + Array(#","groupType":"CONSUMER"}]}"#.utf8)
        )
        #expect(response.groups.first?.groupID == text)
    }
}
