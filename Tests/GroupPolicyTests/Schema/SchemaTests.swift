#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Testing

@testable import GroupPolicy

/// The editor schemas in `Policies/schema/` declare exactly the keys the loader accepts, object by
/// object, so that neither can gain or lose a key alone. (`.ci/run` also validates the shipped
/// files and deliberately invalid ones against the schemas with a maintained validator.)
@Suite struct SchemaTests {
    static func schema(_ name: String) throws -> JSONNode {
        let data = try Data(contentsOf: URL(filePath: repositoryFile("Policies/schema/" + name)))
        var reader = JSONReader()
        return try reader.parse(Array(data))
    }

    /// The keys of `properties` of the schema object at `path` (object keys, from the root).
    static func properties(_ root: JSONNode, _ path: [String]) -> [String]? {
        var node = root
        for key in path + ["properties"] {
            guard case .object(let members) = node.value, let next = members.first(where: { $0.key == key }) else {
                return nil
            }
            node = next.value
        }
        guard case .object(let members) = node.value else { return nil }
        return members.map(\.key)
    }

    @Test func thePolicySchemaDeclaresTheLoadersKeys() throws {
        let root = try Self.schema("group-policy.schema.json")
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
            #expect(Self.properties(root, path).map(Set.init) == Set(keys), "\(path)")
        }
        guard case .object(let definitions)? = Self.node(root, ["$defs", "capability"]).map(\.value),
            case .array(let options)? = definitions.first(where: { $0.key == "oneOf" })?.value.value,
            let objectOption = options.last
        else {
            Issue.record("no capability object in the schema")
            return
        }
        #expect(Self.properties(objectOption, []).map(Set.init) == Set(Keys.capability))
    }

    @Test func theTestSchemaDeclaresTheLoadersKeys() throws {
        let root = try Self.schema("group-policy-tests.schema.json")
        typealias Keys = PolicyTestParser.Keys
        let expected: [([String], [String])] = [
            ([], Keys.document),
            (["$defs", "case"], Keys.testCase),
            (["$defs", "context"], Keys.context),
            (["$defs", "expect"], Keys.expect),
            (["$defs", "expect", "properties", "workspaces", "items"], Keys.membership),
        ]
        for (path, keys) in expected {
            #expect(Self.properties(root, path).map(Set.init) == Set(keys), "\(path)")
        }
    }

    static func node(_ root: JSONNode, _ path: [String]) -> JSONNode? {
        var node = root
        for key in path {
            guard case .object(let members) = node.value, let next = members.first(where: { $0.key == key }) else {
                return nil
            }
            node = next.value
        }
        return node
    }
}
