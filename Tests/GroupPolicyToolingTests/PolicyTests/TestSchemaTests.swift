import GroupPolicyTestSupport
import Testing

@testable import GroupPolicyTooling

/// The editor schema of policy test files declares exactly the keys the test-file loader accepts.
@Suite struct TestSchemaTests {
    @Test func theTestSchemaDeclaresTheLoadersKeys() throws {
        let root = try SchemaFile.schema("group-policy-tests.schema.json")
        typealias Keys = PolicyTestParser.Keys
        let expected: [([String], [String])] = [
            ([], Keys.document),
            (["$defs", "case"], Keys.testCase),
            (["$defs", "context"], Keys.context),
            (["$defs", "expect"], Keys.expect),
            (["$defs", "expect", "properties", "workspaces", "items"], Keys.membership),
        ]
        for (path, keys) in expected {
            #expect(SchemaFile.properties(root, path).map(Set.init) == Set(keys), "\(path)")
        }
    }
}
