import GroupPolicy
import GroupPolicyBasics

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension SwiftConstantsGenerator.Output {
    /// Writes the source to `path`, leaving the file untouched when it already holds exactly this
    /// source (so a build that regenerates it has nothing new to compile).
    ///
    /// A symbolic link is written through, so it stays a link. Anything that is not a regular
    /// file (a device such as `/dev/null`, a FIFO, a directory) is refused: the write replaces the
    /// file it names, and would replace the device itself.
    ///
    /// - Parameter path: The file to write; its directory must exist.
    /// - Throws: ``SwiftConstantsGenerator/OutputPathError`` when `path` names something that is
    ///   not a regular file; the file system's error when the file cannot be written.
    public func write(to path: String) throws {
        let bytes = Data(source.utf8)
        let target = realPath(path) ?? path
        if let kind = Self.nonRegularKind(target) {
            throw SwiftConstantsGenerator.OutputPathError(description: "\(path) is \(kind), not a file")
        }
        // Read no more of the old file than the new source's size: a longer file differs anyway.
        if let old = try? BoundedFileReader.read(target, maximumBytes: bytes.count), old.elementsEqual(bytes) {
            return
        }
        try bytes.write(to: URL(filePath: target), options: .atomic)
    }

    /// What `path` names when it exists and is not a regular file, as messages say it.
    private static func nonRegularKind(_ path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch Int(info.st_mode) & Int(S_IFMT) {
        case Int(S_IFREG): return nil
        case Int(S_IFDIR): return "a directory"
        case Int(S_IFIFO): return "a FIFO"
        case Int(S_IFCHR): return "a character device"
        case Int(S_IFBLK): return "a block device"
        case Int(S_IFSOCK): return "a socket"
        default: return "a special file"
        }
    }
}

extension SwiftConstantsGenerator {
    /// The path given for the generated file names something that is not a regular file.
    public struct OutputPathError: Error, Sendable, Equatable, CustomStringConvertible {
        /// One line: the path and what it names, such as `/dev/null is a character device, not a
        /// file`.
        public var description: String
    }
}
