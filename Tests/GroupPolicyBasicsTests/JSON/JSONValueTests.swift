import Testing

@testable import GroupPolicyBasics

/// The names "expected X, found Y" messages print for each JSON type.
@Suite struct JSONValueTests {
    @Test(
        arguments: [
            (JSONValue.null, "null"),
            (.bool(false), "a boolean"),
            (.number("1e400"), "a number"),
            (.string(""), "a string"),
            (.array([]), "an array"),
            (
                .object([JSONMember(key: "k", keyOffset: 1, value: JSONNode(offset: 6, value: .null, end: 10))]),
                "an object"
            ),
        ]
    )
    func typeNames(value: JSONValue, name: String) {
        #expect(value.typeName == name)
    }
}
