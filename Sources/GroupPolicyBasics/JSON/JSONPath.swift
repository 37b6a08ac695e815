/// The path from a document's root to one value, printed as `rules[2].match.productId`; keys that
/// are not plain identifiers print in brackets (`capabilities["workspace.view"]`), the root as `$`.
package struct JSONPath: Hashable, Sendable, CustomStringConvertible {
    /// One step of a path: a member's key or an element's index.
    package enum Component: Hashable, Sendable {
        case key(String)
        case index(Int)
    }

    /// The steps from the root, in order.
    package private(set) var components: [Component] = []

    package static let root = JSONPath()

    /// The path made of `components`; the root when there are none.
    package init(components: [Component] = []) {
        self.components = components
    }

    package func appending(_ key: String) -> JSONPath {
        var copy = self
        copy.components.append(.key(key))
        return copy
    }

    /// This path followed by the steps of `other`.
    package func appending(contentsOf other: JSONPath) -> JSONPath {
        var copy = self
        copy.components += other.components
        return copy
    }

    package func appending(_ index: Int) -> JSONPath {
        var copy = self
        copy.components.append(.index(index))
        return copy
    }

    package var description: String {
        guard !components.isEmpty else { return "$" }
        var text = ""
        for component in components {
            switch component {
            case .index(let index):
                // Appended piece by piece, without an interpolation: a large policy may have a
                // warning, and so a path, per rule.
                text += "["
                text += String(index)
                text += "]"
            case .key(let key) where Self.isIdentifier(key):
                if !text.isEmpty { text += "." }
                text += key
            case .key(let key):
                text += "[\"\(key.unicodeScalars.map { Self.escape($0) }.joined())\"]"
            }
        }
        return text
    }

    private static func isIdentifier(_ key: String) -> Bool {
        guard let first = key.utf8.first, !(first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9")) else {
            return false
        }
        return key.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
        }
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String {
        switch scalar {
        case "\"": "\\\""
        case "\\": "\\\\"
        case _ where scalar.value < 0x20:
            "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                + String(scalar.value, radix: 16)
        default: String(scalar)
        }
    }
}
