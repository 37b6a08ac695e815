import GroupPolicy
import Testing

@Test func sandboxPlaceholderDecodes() throws {
    let response = try GetCustomerGroupsResponse(jsonBytes: Array(#"{"groups":[]}"#.utf8))
    #expect(response.groups == [])
}
