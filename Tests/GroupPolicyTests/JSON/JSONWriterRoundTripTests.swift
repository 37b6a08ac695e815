import GroupPolicyBasics
import Testing

@testable import GroupPolicy

/// The writer's escaping read back by the runtime's strict decoder (the escaping itself is tested
/// exactly with the writer, in GroupPolicyBasicsTests).
@Suite struct JSONWriterRoundTripTests {
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
