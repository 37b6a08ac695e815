import GroupPolicy
import GroupPolicyBasics

/// A policy test case that pins what an author sees (one capability granted or not, to one group
/// or to the whole response), and the text of the test file with the case added.
///
/// ``PolicyWorkbench/pinTestCase(capability:group:response:responseName:context:)`` makes one;
/// nothing is written: the playground holds the new text as an unsaved edit of the test file,
/// which its tests then run.
public struct PinnedTestCase: Sendable, Hashable {
    /// The test file's name in the directory (an edit's name, see ``PolicyWorkbench``).
    public var file: String
    /// The case's name, unique in the file.
    public var name: String
    /// Whether the case expects the capability granted (`includes`) or not (`excludes`).
    public var granted: Bool
    /// The case as JSON, as ``Scenario/testCaseJSON(name:includes:excludes:)`` writes it.
    public var caseJSON: String
    /// The test file's text with the case added as the last of its `cases`, indented as the case
    /// before it; the rest of the text as it was.
    public var text: String

    /// Creates a pinned case.
    public init(file: String, name: String, granted: Bool, caseJSON: String, text: String) {
        self.file = file
        self.name = name
        self.granted = granted
        self.caseJSON = caseJSON
        self.text = text
    }

    /// The names of a test file's cases, and the text with one more case (named by `makeCase`,
    /// given a name no case of the file has) added last in its `cases`.
    ///
    /// - Throws: `invalidTestFile` when the text is not JSON or has no `cases` array.
    static func adding(
        to bytes: [UInt8],
        fileName: String,
        name: String,
        makeCase: (String) -> String
    ) throws(GroupPolicyError) -> (name: String, caseJSON: String, text: String) {
        let root: JSONNode
        do {
            var reader = JSONReader()
            root = try reader.parse(bytes)
        } catch {
            throw GroupPolicyError(
                code: .invalidTestFile,
                message: "\(fileName) is not valid JSON (fix it to add a test): \(error.message)"
            )
        }
        guard case .object(let members) = root.value,
            let cases = members.first(where: { $0.key.isExactly("cases") }),
            case .array(let elements) = cases.value.value
        else {
            throw GroupPolicyError(code: .invalidTestFile, message: "\(fileName) has no 'cases' array to add a test to")
        }
        var names: Set<String> = []
        for element in elements {
            guard case .object(let fields) = element.value,
                let field = fields.first(where: { $0.key.isExactly("name") }),
                case .string(let existing) = field.value.value
            else { continue }
            names.insert(existing)
        }
        var unique = name
        var ordinal = 2
        while names.contains(where: { $0.isExactly(unique) }) {
            unique = "\(name) (\(ordinal))"
            ordinal += 1
        }
        let caseJSON = makeCase(unique)
        let text: [UInt8]
        let outer = indentation(of: cases.keyOffset, in: bytes) ?? "  "
        let lines = caseJSON.split(separator: "\n")
        if let last = elements.last {
            let indent = indentation(of: last.offset, in: bytes) ?? outer + "  "
            let inserted = ",\n" + indent + lines.joined(separator: "\n" + indent)
            text = Array(bytes[..<last.end]) + Array(inserted.utf8) + Array(bytes[last.end...])
        } else {
            let inner = outer + "  "
            let array = "[\n" + inner + lines.joined(separator: "\n" + inner) + "\n" + outer + "]"
            text = Array(bytes[..<cases.value.offset]) + Array(array.utf8) + Array(bytes[cases.value.end...])
        }
        return (unique, caseJSON, String(decoding: text, as: UTF8.self))
    }

    /// The spaces before `offset` on its line, or `nil` when something else comes first there.
    private static func indentation(of offset: Int, in bytes: [UInt8]) -> String? {
        var start = offset
        while start > 0, bytes[start - 1] == UInt8(ascii: " ") || bytes[start - 1] == UInt8(ascii: "\t") {
            start -= 1
        }
        guard start == 0 || bytes[start - 1] == UInt8(ascii: "\n") else { return nil }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }
}
