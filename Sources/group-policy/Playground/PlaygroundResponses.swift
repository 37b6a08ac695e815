import Foundation
import GroupPolicy
import GroupPolicyTooling

/// The responses the page offers: `--response FILE` first, then every response file the
/// directory's policy tests name (for `Policies/`, the recorded responses of `Examples/`), then
/// Apple's sandbox placeholder answer.
enum PlaygroundResponses {
    struct Choice: Sendable {
        var name: String
        var text: String
    }

    /// The name the sandbox placeholder is offered under.
    static let sandboxPlaceholderName = "sandbox placeholder"

    /// The most response files offered, and their bytes together: what a page shows in a menu, and
    /// far less than it is sent in one answer.
    static let maximumFiles = 64
    static let maximumTotalBytes = 16 << 20

    /// The choices: `first`, then each response file once, read within the response limit (a file
    /// that cannot be read is left out: its tests say why), then the sandbox placeholder.
    static func choices(directory: String, first: Choice?) -> [Choice] {
        var choices = first.map { [$0] } ?? []
        var seen = Set(choices.map { tidied($0.name) })
        var totalBytes = 0
        for (name, path) in responseFiles(namedUnder: directory) where seen.insert(name).inserted {
            guard choices.count < maximumFiles, let bytes = try? readInput(path) else { continue }
            totalBytes += bytes.count
            guard totalBytes <= maximumTotalBytes else { break }
            choices.append(Choice(name: name, text: String(decoding: bytes, as: UTF8.self)))
        }
        choices.append(
            Choice(
                name: sandboxPlaceholderName,
                text: GetCustomerGroupsResponse.sandboxPlaceholder.jsonString(pretty: true)
            )
        )
        return choices
    }

    /// The `responseFile` of every case of every test file that `test DIR` runs, resolved against
    /// its test file as the tests resolve it, by name: the path tidied
    /// (`Policies/../Examples/a.json` is offered as `Examples/a.json`), sorted.
    private static func responseFiles(namedUnder directory: String) -> [(name: String, path: String)] {
        let testFiles = (try? PolicyFiles.files(under: [directory], matching: PolicyFiles.isTestFileName)) ?? []
        var paths: [String: String] = [:]
        for testFile in testFiles {
            guard let bytes = try? BoundedFileReader.read(testFile, maximumBytes: PolicyLimits.default.maximumBytes),
                let suite = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                let cases = suite["cases"] as? [[String: Any]]
            else { continue }
            let base = (testFile as NSString).deletingLastPathComponent
            for testCase in cases {
                guard let relative = testCase["responseFile"] as? String else { continue }
                let path = relative.hasPrefix("/") ? relative : base + "/" + relative
                paths[tidied(path)] = paths[tidied(path)] ?? path
            }
        }
        return paths.sorted { $0.key < $1.key }.map { (name: $0.key, path: $0.value) }
    }

    /// The path without `.` and `dir/..` steps (a `..` at the start of a relative path stays): a
    /// name to show, while the file is read at the path as resolved.
    static func tidied(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == "..", let last = parts.last, last != ".." {
                parts.removeLast()
            } else {
                parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        return path.hasPrefix("/") ? "/" + joined : joined
    }
}
