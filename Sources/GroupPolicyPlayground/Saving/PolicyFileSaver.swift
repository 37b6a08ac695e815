import Foundation
import GroupPolicy
import GroupPolicyBasics
import GroupPolicyTooling

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes an edited policy or test file of the playground's directory, and nothing else.
///
/// The name must be one of the directory's policy or test files, given by its name alone: an absolute
/// path, a `..`, a `/`, or a file that is not one of those is refused, and so is a file that
/// is a symbolic link leading out of the directory. The bytes go to a new hidden file beside the
/// file's real path, which is flushed and then renamed over it: a reader sees the old file or the
/// new one, never part of one, and the directory's other files are never touched.
///
/// A file is written only over the version the author was editing: the saver reads it before the
/// check and again just before the rename, and refuses (409, with both texts) when it is not that
/// version any more. The playground holds its save lock around the whole, so two of its own saves
/// never interleave; another program writing the file in the instant between the second reading and
/// the rename is the one case left, as it is for any editor.
struct PolicyFileSaver: Sendable {
    var directory: String

    /// The real path to write for a file name, or the refusal.
    func destination(of name: String) throws(PlaygroundFailure) -> String {
        if name.hasPrefix("/") {
            throw PlaygroundFailure(.badRequest, "refused: '\(name)' is an absolute path; give a policy file's name")
        }
        if name.split(separator: "/").contains("..") || name == ".." {
            throw PlaygroundFailure(.badRequest, "refused: '\(name)' leads out of the policy directory")
        }
        if name.contains("/") || name.isEmpty {
            throw PlaygroundFailure(.badRequest, "refused: '\(name)' is not a file name in the policy directory")
        }
        let files: [String]
        do {
            let workbench = try PolicyWorkbench(directory: directory)
            files = (workbench.policyFiles + workbench.testFiles).map(PolicyWorkbench.fileName)
        } catch {
            throw PlaygroundFailure(.internalServerError, error.message)
        }
        guard files.contains(name) else {
            throw PlaygroundFailure(.badRequest, "refused: '\(name)' is not a policy or test file of \(directory)")
        }
        guard let root = realPath(directory), let target = realPath(directory + "/" + name),
            target.hasPrefix(root.hasSuffix("/") ? root : root + "/")
        else {
            throw PlaygroundFailure(.forbidden, "refused: '\(name)' is a link leading out of the policy directory")
        }
        return target
    }

    /// Refuses (409) unless the file at `path` is at `version`; the answer holds the text on disk
    /// and its version, and the edit.
    func expect(_ version: FileVersion, of path: String, name: String, edit: String) throws(PlaygroundFailure) {
        let bytes: [UInt8]?
        do {
            bytes = try BoundedFileReader.read(path, maximumBytes: PolicyLimits.default.maximumBytes)
        } catch {
            guard error.code == .unreadableFile, !fileExists(path) else {
                throw PlaygroundFailure(.internalServerError, error.message)
            }
            bytes = nil
        }
        let current = bytes.map(FileVersion.init(of:)) ?? .absent
        guard current != version else { return }
        throw PlaygroundFailure(
            .conflict,
            "not saved: \(name) changed on disk since the page loaded it (reload it, or overwrite it on purpose)",
            details: [
                "file": PlaygroundJSON.string(name),
                "disk": bytes.map { PlaygroundJSON.string(String(decoding: $0, as: UTF8.self)) } ?? "null",
                "diskVersion": PlaygroundJSON.string(current.description),
                "edit": PlaygroundJSON.string(edit),
            ]
        )
    }

    /// Writes `bytes` to `path` through a temporary file in the same directory, flushed, then
    /// `beforeRename` (which may refuse), then renamed over it.
    func write(
        _ bytes: [UInt8],
        to path: String,
        beforeRename: () throws(PlaygroundFailure) -> Void = {}
    ) throws(PlaygroundFailure) {
        let folder = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary = "\(folder)/.\(name).playground-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        var status = stat()
        let mode = stat(path, &status) == 0 ? status.st_mode & 0o777 : 0o644
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL, mode)
        guard descriptor >= 0 else { throw failure("cannot create \(temporary)") }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                buffer.baseAddress.map { Foundation.write(descriptor, $0 + offset, buffer.count - offset) } ?? -1
            }
            guard written > 0 else {
                let error = failure("cannot write \(temporary)")
                close(descriptor)
                unlink(temporary)
                throw error
            }
            offset += written
        }
        guard fsync(descriptor) == 0, close(descriptor) == 0 else {
            let error = failure("cannot flush \(temporary)")
            unlink(temporary)
            throw error
        }
        do {
            try beforeRename()
        } catch {
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let error = failure("cannot replace \(path)")
            unlink(temporary)
            throw error
        }
    }

    private func fileExists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    private func failure(_ message: String) -> PlaygroundFailure {
        PlaygroundFailure(.internalServerError, "\(message): \(String(cString: strerror(errno)))")
    }
}
