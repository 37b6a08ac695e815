import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The editor schemas in `Policies/schema/` declare exactly the keys the loader accepts, object by
/// object, so that neither can gain or lose a key alone. (`.ci/run` also validates the shipped
/// files and deliberately invalid ones against the schemas with a maintained validator.)
@Suite struct SchemaTests {
    @Test func thePolicySchemaDeclaresTheLoadersKeys() throws {
        let root = try SchemaFile.schema("group-policy.schema.json")
        typealias Keys = PolicyParser.Keys
        let expected: [([String], [String])] = [
            ([], Keys.document),
            (["$defs", "rule"], Keys.rule),
            (["$defs", "match"], Keys.match),
            // The loader knows `role` in a workspace match only to reject it with a clear message.
            (["$defs", "workspaceMatch"], Keys.match.filter { $0 != "role" }),
            (["$defs", "requires"], Keys.requires),
            (["$defs", "workspace"], Keys.workspace),
            (["properties", "sandbox"], Keys.sandbox),
            (["$defs", "invariant"], Keys.invariant),
            (["$defs", "invariantBody"], Keys.invariantBody),
        ]
        for (path, keys) in expected {
            #expect(SchemaFile.properties(root, path).map(Set.init) == Set(keys), "\(path)")
        }
        guard case .array(let options)? = SchemaFile.node(root, ["$defs", "capability", "oneOf"]),
            let objectOption = options.last
        else {
            Issue.record("no capability object in the schema")
            return
        }
        #expect(SchemaFile.properties(objectOption, []).map(Set.init) == Set(Keys.capability))
    }
}
