import Foundation
import ServingTestSupport
import Testing

@testable import GroupPolicyPlayground

/// The page's files are real files of `Sources/GroupPolicyPlayground/Web`, every one of them served,
/// and its JavaScript passes ESLint with the rules of `Web/.eslintrc.json`.
@Suite struct WebFilesTests {
    /// The repository's root, from this file's path.
    static let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    static let web = packageRoot + "/Sources/GroupPolicyPlayground/Web"

    @Test func everyFileOfWebIsServedAsItIsOnDisk() throws {
        var onDisk: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: Self.web)
        while let path = enumerator?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: Self.web + "/" + path, isDirectory: &isDirectory)
            if exists, !isDirectory.boolValue, !path.split(separator: "/").contains(where: { $0.hasPrefix(".") }) {
                onDisk.append(path == "index.html" ? "/" : "/" + path)
            }
        }
        #expect(onDisk.sorted() == PlaygroundAssets.byPath.keys.sorted())
        for (path, asset) in PlaygroundAssets.byPath {
            let file = Self.web + (path == "/" ? "/index.html" : path)
            #expect(asset.body == Array(try Data(contentsOf: URL(filePath: file))), "\(path) differs from \(file)")
        }
    }

    @Test(.requires(.eslint)) func theJavaScriptPassesESLint() async throws {
        let result = try await Self.eslint(["js"], in: Self.web)
        #expect(result.status == 0, "\(result.standardOutput)\(result.standardError)")
        #expect(result.standardOutput == "")
    }

    /// The rules catch what the page must never do: markup from text, `var`, loose equality.
    @Test(.requires(.eslint)) func theRulesRejectMarkupFromText() async throws {
        let folder = FileManager.default.temporaryDirectory.path + "/playground-eslint-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let bad = """
            export function show(node, text) {
              var shown = text == null ? "" : text;
              node.innerHTML = shown;
            }

            """
        try Data(bad.utf8).write(to: URL(filePath: folder + "/bad.js"))
        let result = try await Self.eslint(["--format", "unix", "bad.js"], in: folder)
        #expect(result.status == 1, "\(result.standardOutput)\(result.standardError)")
        let findings = result.standardOutput.split(separator: "\n").filter { $0.hasPrefix(folder) }
            .map { $0.dropFirst(folder.count + 1) }
        #expect(
            findings == [
                "bad.js:2:3: Unexpected var, use let or const instead. [Error/no-var]",
                "bad.js:2:20: Expected '===' and instead saw '=='. [Error/eqeqeq]",
                "bad.js:3:3: use textContent: text goes in as text [Error/no-restricted-syntax]",
            ]
        )
    }

    /// ESLint, with the page's configuration only, run in `folder`.
    ///
    /// No configuration found above the files counts; and it runs in the folder because Debian's
    /// ESLint 6 fails on a path outside its working directory.
    static func eslint(_ arguments: [String], in folder: String) async throws -> ProcessResult {
        try await runProcess(
            URL(filePath: "/usr/bin/env"),
            [
                "-C", folder, "NODE_PATH=\(OptionalComponent.eslintModulePath)", "eslint", "--no-eslintrc", "--config",
                web + "/.eslintrc.json", "--max-warnings", "0",
            ] + arguments
        )
    }
}
