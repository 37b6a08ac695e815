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

    /// The choices, each response file once, read within the response limit; a file that cannot
    /// be read is left out (its tests say why).
    static func choices(directory: String, responseFile: String?) -> [Choice] {
        var choices: [Choice] = []
        var seen: Set<String> = []
        for path in (responseFile.map { [$0] } ?? []) + responseFiles(namedUnder: directory) {
            guard seen.insert(tidied(path)).inserted,
                let bytes = try? readInput(path)
            else { continue }
            choices.append(Choice(name: path, text: String(decoding: bytes, as: UTF8.self)))
        }
        choices.append(
            Choice(name: sandboxPlaceholderName, text: GetCustomerGroupsResponse.sandboxPlaceholder.jsonString(pretty: true))
        )
        return choices
    }

    /// The `responseFile` of every case of every test file under the directory, resolved against
    /// its test file and tidied (`Policies/../Examples/a.json` is `Examples/a.json`), sorted.
    private static func responseFiles(namedUnder directory: String) -> [String] {
        let testFiles = (try? FileManager.default.subpathsOfDirectory(atPath: directory)) ?? []
        var paths: Set<String> = []
        for name in testFiles where name.hasSuffix(".tests.json") {
            let testFile = (directory as NSString).appendingPathComponent(name)
            guard let bytes = try? readInput(testFile),
                let suite = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                let cases = suite["cases"] as? [[String: Any]]
            else { continue }
            let base = (testFile as NSString).deletingLastPathComponent
            for testCase in cases {
                guard let relative = testCase["responseFile"] as? String else { continue }
                paths.insert(tidied(relative.hasPrefix("/") ? relative : base + "/" + relative))
            }
        }
        return paths.sorted()
    }

    /// The path without `.` and `dir/..` steps (a `..` at the start of a relative path stays).
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
