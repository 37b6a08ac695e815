import GroupPolicyBasics

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one owner of "which files are policies", for every entry point of the package.
///
/// - A policy set is flat: the `*.json` files directly in a directory, except test files
///   (`*.tests.json`) and JSON Schemas (`*.schema.json`), sorted by name. `Policy`'s directory
///   initializers, `PolicyStore` and `generate-swift` use it.
/// - `check` and `test` walk recursively: under each path, every policy file and every test file
///   at any depth, each directory's entries in name order.
///
/// Both skip hidden entries (names starting with `.`, such as a Kubernetes ConfigMap's `..data`
/// and editors' lock files), follow symbolic links, and take each real file once, whatever the
/// links leading to it; the walk enters each real directory once, so a link loop ends, and refuses
/// directories nested deeper than ``maximumDepth``. Paths come back as reached (not resolved), so
/// messages name the files the way the user sees them.
package enum PolicyFiles {
    /// How many directory levels below a given path the walk descends.
    static let maximumDepth = 32

    /// The status of a path the user named: a missing or unreadable one is an `unreadableFile`
    /// error saying why.
    static func status(of path: String) throws(GroupPolicyError) -> FileStatus {
        do {
            return try FileStatus(path: path)
        } catch {
            let reason = error.isNoSuchFile ? "no such file or directory" : error.reason
            throw GroupPolicyError(code: .unreadableFile, message: "cannot read \(path): \(reason)")
        }
    }

    /// Whether a file name is a policy's: `*.json` but not `*.tests.json` or `*.schema.json`.
    static func isPolicyFileName(_ name: String) -> Bool {
        name.hasSuffix(".json") && !isTestFileName(name) && !name.hasSuffix(".schema.json")
    }

    /// Whether a file name is a policy test file's: `*.tests.json`.
    static func isTestFileName(_ name: String) -> Bool {
        name.hasSuffix(".tests.json")
    }

    /// The files of the policy set in a directory (the flat rule), sorted by name.
    ///
    /// An entry that names a directory is not a file and is left out, and so is a FIFO, a device or
    /// a socket (found in a directory, such a file would block or never end; named on its own it
    /// is read, or refused, by the bounded reader); one that does not resolve (a dangling link)
    /// stays, so that loading it says why.
    ///
    /// - Parameter directory: The directory; returned paths start with it as given.
    /// - Returns: The policy files, possibly none.
    /// - Throws: A ``GroupPolicyError`` with code `unreadableFile` when the directory cannot be listed.
    static func policySet(inDirectory directory: String) throws(GroupPolicyError) -> [String] {
        var seen = Set<String>()
        var files: [String] = []
        for name in try entries(of: directory) where isPolicyFileName(name) {
            let path = join(directory, name)
            if let kind = (try? FileStatus(path: path))?.kind, kind != .regular { continue }
            if seen.insert(realPath(path) ?? path).inserted { files.append(path) }
        }
        return files
    }

    /// The files a path given as a policy stands for.
    ///
    /// A directory's policy set (the flat rule), or any other path as given: the choice
    /// ``Policy/init(contentsOf:limits:)`` makes, for a tool that loads the files itself
    /// (`generate-swift`).
    ///
    /// - Parameter path: A policy file or a directory.
    /// - Returns: The policy files, at least one.
    /// - Throws: A ``GroupPolicyError`` with code `unreadableFile` when nothing is at `path`, when
    ///   the directory cannot be listed, or when it holds no policy file.
    package static func policyFiles(at path: String) throws(GroupPolicyError) -> [String] {
        guard try status(of: path).kind == .directory else { return [path] }
        let found = try policySet(inDirectory: path)
        guard !found.isEmpty else {
            throw GroupPolicyError(code: .unreadableFile, message: "no policy files (*.json) in directory \(path)")
        }
        return found
    }

    /// The policy files and test files under the paths, found by one recursive walk.
    ///
    /// A file named in `paths` is taken by its name: a test file, a schema (left out), or else a
    /// policy. A directory is searched at any depth for policy and test file names.
    ///
    /// - Parameter paths: Files and directories, as the user gave them.
    /// - Returns: The policy files and the test files, in walk order.
    /// - Throws: A ``GroupPolicyError`` with code `unreadableFile` for a path that does not exist, a
    ///   directory that cannot be listed, or one nested too deep.
    package static func find(
        under paths: [String]
    ) throws(GroupPolicyError) -> (policyFiles: [String], testFiles: [String]) {
        var walk = Walk()
        try walk.visit(paths) { name, named in
            if isTestFileName(name) { return .test }
            if named { return name.hasSuffix(".schema.json") ? nil : .policy }
            return isPolicyFileName(name) ? .policy : nil
        }
        return (walk.found[.policy] ?? [], walk.found[.test] ?? [])
    }

    /// The files under the paths that a walk finds by name, each real file once; a file named in
    /// `paths` is taken as given whatever its name.
    ///
    /// - Parameters:
    ///   - paths: Files and directories, as the user gave them.
    ///   - matching: Whether a file name found in a directory is wanted.
    /// - Returns: The files, in walk order.
    /// - Throws: A ``GroupPolicyError`` with code `unreadableFile` (see ``find(under:)``).
    static func files(
        under paths: [String],
        matching: (String) -> Bool
    ) throws(GroupPolicyError) -> [String] {
        var walk = Walk()
        try walk.visit(paths) { name, named in named || matching(name) ? .policy : nil }
        return walk.found[.policy] ?? []
    }

    /// Every test file (`*.tests.json`) under the paths: a file is taken as given, a directory is
    /// searched recursively; sorted within each directory.
    ///
    /// - Parameter paths: Files and directories, as the user gave them.
    /// - Returns: The test files, in walk order.
    /// - Throws: A ``GroupPolicyError`` with code `unreadableFile` (see ``find(under:)``).
    package static func testFiles(under paths: [String]) throws(GroupPolicyError) -> [String] {
        try files(under: paths, matching: isTestFileName)
    }

    /// A directory's entries that are not hidden, sorted by name.
    static func entries(of directory: String) throws(GroupPolicyError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory)
                .filter { !$0.hasPrefix(".") }
                .sorted()
        } catch {
            throw GroupPolicyError(
                code: .unreadableFile,
                message: "cannot read directory \(directory): \(describe(error))"
            )
        }
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    private enum Category: Hashable {
        case policy
        case test
    }

    /// One walk's memory: the real directories entered and the real files taken.
    private struct Walk {
        var directories = Set<String>()
        var files = Set<String>()
        var found: [Category: [String]] = [:]

        /// Walks the paths; `classify` gets a file's name and whether the user named it.
        mutating func visit(
            _ paths: [String],
            classify: (String, Bool) -> Category?
        ) throws(GroupPolicyError) {
            for path in paths {
                if try PolicyFiles.status(of: path).kind == .directory {
                    try walk(path, depth: 0, classify: classify)
                } else if let category = classify(baseName(path), true) {
                    take(path, category)
                }
            }
        }

        private mutating func walk(
            _ directory: String,
            depth: Int,
            classify: (String, Bool) -> Category?
        ) throws(GroupPolicyError) {
            guard directories.insert(realPath(directory) ?? directory).inserted else { return }
            guard depth <= PolicyFiles.maximumDepth else {
                throw GroupPolicyError(
                    code: .unreadableFile,
                    message: "\(directory): directories nested more than \(PolicyFiles.maximumDepth) levels deep"
                )
            }
            for name in try PolicyFiles.entries(of: directory) {
                let path = PolicyFiles.join(directory, name)
                let kind = (try? FileStatus(path: path))?.kind
                if kind == .directory {
                    try walk(path, depth: depth + 1, classify: classify)
                } else if kind == nil || kind == .regular, let category = classify(name, false) {
                    // FIFOs, devices and sockets found in a directory are no policy files.
                    take(path, category)
                }
            }
        }

        private mutating func take(_ path: String, _ category: Category) {
            guard files.insert(realPath(path) ?? path).inserted else { return }
            found[category, default: []].append(path)
        }

        private func baseName(_ path: String) -> String {
            path.split(separator: "/").last.map(String.init) ?? path
        }
    }
}

/// A short reason for a file error, without Foundation's long wrappers.
private func describe(_ error: any Error) -> String {
    if let error = error as? CocoaError {
        switch error.code {
        case .fileReadNoSuchFile, .fileNoSuchFile: return "no such file"
        case .fileReadNoPermission: return "permission denied"
        case .fileReadInvalidFileName: return "invalid file name"
        default: break
        }
    }
    return "\(error)"
}
