#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The editor schemas in `Policies/schema/`, read as plain JSON: the tests compare their keys with
/// the loaders', so they need only objects, arrays and key names.
package enum SchemaFile {
    /// A schema's JSON: objects by key and arrays in order; any other value is `other`.
    package indirect enum Node: Decodable, Equatable {
        case object([String: Node])
        case array([Node])
        case other

        package init(from decoder: any Decoder) throws {
            if let object = try? decoder.container(keyedBy: Key.self) {
                var members: [String: Node] = [:]
                for key in object.allKeys { members[key.stringValue] = try object.decode(Node.self, forKey: key) }
                self = .object(members)
            } else if var array = try? decoder.unkeyedContainer() {
                var elements: [Node] = []
                while !array.isAtEnd { elements.append(try array.decode(Node.self)) }
                self = .array(elements)
            } else {
                self = .other
            }
        }

        private struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }

    /// The schema file's parsed JSON.
    package static func schema(_ name: String) throws -> Node {
        let data = try Data(contentsOf: URL(filePath: repositoryFile("Policies/schema/" + name)))
        return try JSONDecoder().decode(Node.self, from: data)
    }

    /// The value at `path` (object keys, from `root`), or `nil` when a key is missing.
    package static func node(_ root: Node, _ path: [String]) -> Node? {
        var node = root
        for key in path {
            guard case .object(let members) = node, let next = members[key] else { return nil }
            node = next
        }
        return node
    }

    /// The keys of `properties` of the schema object at `path` (object keys, from the root).
    package static func properties(_ root: Node, _ path: [String]) -> [String]? {
        guard case .object(let members)? = node(root, path + ["properties"]) else { return nil }
        return Array(members.keys)
    }
}
