import Foundation
import GroupPolicyBasics
import GroupPolicyTooling

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes an edited policy file of the playground's directory, and nothing else.
///
/// The name must be one of the directory's policy files, given by its name alone: an absolute
/// path, a `..`, a `/`, or a file that is not a policy of the set is refused, and so is a file that
/// is a symbolic link leading out of the directory. The bytes go to a new hidden file beside the
/// file's real path, which is flushed and then renamed over it: a reader sees the old file or the
/// new one, never part of one, and the directory's other files are never touched.
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
            files = try PolicyWorkbench(directory: directory).policyFiles.map(PolicyWorkbench.fileName)
        } catch {
            throw PlaygroundFailure(.internalServerError, error.message)
        }
        guard files.contains(name) else {
            throw PlaygroundFailure(.badRequest, "refused: '\(name)' is not a policy file of \(directory)")
        }
        guard let root = realPath(directory), let target = realPath(directory + "/" + name),
            target.hasPrefix(root.hasSuffix("/") ? root : root + "/")
        else {
            throw PlaygroundFailure(.forbidden, "refused: '\(name)' is a link leading out of the policy directory")
        }
        return target
    }

    /// Writes `bytes` to `path` through a temporary file in the same directory, renamed over it.
    func write(_ bytes: [UInt8], to path: String) throws(PlaygroundFailure) {
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
        guard rename(temporary, path) == 0 else {
            let error = failure("cannot replace \(path)")
            unlink(temporary)
            throw error
        }
    }

    private func failure(_ message: String) -> PlaygroundFailure {
        PlaygroundFailure(.internalServerError, "\(message): \(String(cString: strerror(errno)))")
    }
}
