package import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The editor schemas in `Policies/schema/`, read with the engine's own JSON reader.
package enum SchemaFile {
    /// The schema file's parsed JSON.
    package static func schema(_ name: String) throws -> JSONNode {
        let data = try Data(contentsOf: URL(filePath: repositoryFile("Policies/schema/" + name)))
        var reader = JSONReader()
        return try reader.parse(Array(data))
    }

    /// The keys of `properties` of the schema object at `path` (object keys, from the root).
    package static func properties(_ root: JSONNode, _ path: [String]) -> [String]? {
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
}
