import Testing

@testable import GroupPolicyBasics

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

/// What `stat` reports, on real files in a temporary directory: each kind, links followed, the
/// identity and modification time exactly, and the reason for each failure messages print.
@Suite struct FileStatusTests {
    @Test func aRegularFile() throws {
        try withTemporaryDirectory { directory in
            let file = directory + "/policy.json"
            try createFile(file, holding: "{ }\n")
            // A modification time with nanoseconds, so the conversion is checked to the last digit.
            let time = timespec(tv_sec: 1_700_000_000, tv_nsec: 123_456_789)
            #expect([time, time].withUnsafeBufferPointer { utimensat(AT_FDCWD, file, $0.baseAddress, 0) } == 0)
            let status = try FileStatus(path: file)
            #expect(status.kind == .regular)
            #expect(status.kind.phrase == "a file")
            #expect(status.size == 4)
            #expect(status.modified == 1_700_000_000_123_456_789)
            let identity = try #require(fileIdentity(file))
            #expect(identity.device == status.device && identity.inode == status.inode)
            #expect(isDirectory(file) == false)
        }
    }

    @Test func anOpenDescriptorReportsWhatItsPathDoes() throws {
        try withTemporaryDirectory { directory in
            let file = directory + "/policy.json"
            try createFile(file, holding: "12345678")
            let descriptor = open(file, O_RDONLY)
            try #require(descriptor >= 0)
            defer { close(descriptor) }
            let status = try FileStatus(descriptor: descriptor)
            #expect(status == (try FileStatus(path: file)))
            #expect(status.kind == .regular)
            #expect(status.size == 8)
        }
    }

    @Test func aDirectory() throws {
        try withTemporaryDirectory { directory in
            let status = try FileStatus(path: directory)
            #expect(status.kind == .directory)
            #expect(status.kind.phrase == "a directory")
            #expect(isDirectory(directory))
            #expect(isDirectory(directory + "/."))
        }
    }

    /// `stat` does not open, so a FIFO with no writer is reported, not waited on.
    @Test func aFIFO() throws {
        try withTemporaryDirectory { directory in
            let fifo = directory + "/stream.json"
            try #require(mkfifo(fifo, 0o600) == 0)
            let status = try FileStatus(path: fifo)
            #expect(status.kind == .fifo)
            #expect(status.kind.phrase == "a FIFO")
            #expect(status.size == 0)
            #expect(isDirectory(fifo) == false)
        }
    }

    @Test func aCharacterDevice() throws {
        let status = try FileStatus(path: "/dev/null")
        #expect(status.kind == .characterDevice)
        #expect(status.kind.phrase == "a character device")
    }

    @Test(
        arguments: [
            (FileStatus.Kind.regular, "a file"),
            (.directory, "a directory"),
            (.fifo, "a FIFO"),
            (.characterDevice, "a character device"),
            (.blockDevice, "a block device"),
            (.socket, "a socket"),
            (.other, "a special file"),
        ]
    )
    func everyKindHasItsPhrase(kind: FileStatus.Kind, phrase: String) {
        #expect(kind.phrase == phrase)
    }

    /// A symbolic link and a hard link reach the same file: the same status and identity; the
    /// canonical path resolves the link, `.` and `..`.
    @Test func linksAreFollowed() throws {
        try withTemporaryDirectory { directory in
            let file = directory + "/policy.json"
            try createFile(file, holding: "{}")
            try #require(mkdir(directory + "/sub", 0o700) == 0)
            try #require(symlink(file, directory + "/sub/link.json") == 0)
            try #require(link(file, directory + "/hard.json") == 0)
            try #require(symlink(directory + "/sub", directory + "/linked-directory") == 0)
            let status = try FileStatus(path: file)
            #expect(try FileStatus(path: directory + "/sub/link.json") == status)
            #expect(try FileStatus(path: directory + "/hard.json") == status)
            let identity = try #require(fileIdentity(file))
            let throughLink = try #require(fileIdentity(directory + "/sub/link.json"))
            let throughHardLink = try #require(fileIdentity(directory + "/hard.json"))
            #expect(throughLink.device == identity.device && throughLink.inode == identity.inode)
            #expect(throughHardLink.device == identity.device && throughHardLink.inode == identity.inode)
            #expect(isDirectory(directory + "/linked-directory"))
            // The temporary directory itself may be reached through a link (macOS's /var).
            let base = try #require(realPath(directory))
            #expect(realPath(directory + "/sub/link.json") == base + "/policy.json")
            #expect(realPath(directory + "/./sub/../linked-directory/link.json") == base + "/policy.json")
            #expect(realPath(directory + "/linked-directory") == base + "/sub")
            #expect(realPath(directory + "/hard.json") == base + "/hard.json")
        }
    }

    @Test func aSymbolicLinkLoopIsAnError() throws {
        try withTemporaryDirectory { directory in
            try #require(symlink(directory + "/b", directory + "/a") == 0)
            try #require(symlink(directory + "/a", directory + "/b") == 0)
            let error = try #require(throws: SystemError.self) { try FileStatus(path: directory + "/a") }
            #expect(error.number == ELOOP)
            #expect(error.reason == "too many levels of symbolic links")
            #expect(error.isNoSuchFile == false)
            #expect(realPath(directory + "/a") == nil)
            #expect(fileIdentity(directory + "/a") == nil)
            #expect(isDirectory(directory + "/a") == false)
        }
    }

    @Test func aMissingPathIsNoSuchFile() throws {
        try withTemporaryDirectory { directory in
            let missing = directory + "/missing.json"
            let error = try #require(throws: SystemError.self) { try FileStatus(path: missing) }
            #expect(error.number == ENOENT)
            #expect(error.isNoSuchFile)
            #expect(error.reason == "no such file")
            #expect(realPath(missing) == nil)
            #expect(fileIdentity(missing) == nil)
            #expect(isDirectory(missing) == false)
            // A link to nothing is followed to nothing.
            try #require(symlink(missing, directory + "/dangling.json") == 0)
            let dangling = try #require(throws: SystemError.self) { try FileStatus(path: directory + "/dangling.json") }
            #expect(dangling.number == ENOENT)
            #expect(realPath(directory + "/dangling.json") == nil)
        }
    }

    @Test func aFileUsedAsADirectoryAndANameTooLongHaveTheirReasons() throws {
        try withTemporaryDirectory { directory in
            let file = directory + "/policy.json"
            try createFile(file, holding: "{}")
            let notDirectory = try #require(throws: SystemError.self) { try FileStatus(path: file + "/inner.json") }
            #expect(notDirectory.number == ENOTDIR)
            #expect(notDirectory.reason == "a component of the path is not a directory")
            let long = directory + "/" + String(repeating: "n", count: 300)
            let tooLong = try #require(throws: SystemError.self) { try FileStatus(path: long) }
            #expect(tooLong.number == ENAMETOOLONG)
            #expect(tooLong.reason == "file name too long")
        }
    }

    /// The reasons messages have always used, and the C library's words, lower-cased, for the rest.
    @Test func reasons() throws {
        #expect(SystemError(number: EACCES).reason == "permission denied")
        #expect(SystemError(number: EPERM).reason == "permission denied")
        #expect(SystemError(number: EISDIR).reason == "is a directory")
        let error = try #require(throws: SystemError.self) { try FileStatus(descriptor: -1) }
        #expect(error.number == EBADF)
        #expect(error.reason == "bad file descriptor")
        #expect(error.isNoSuchFile == false)
    }
}

/// Runs `body` with a new empty directory under the system's temporary directory, then removes it
/// and everything in it.
private func withTemporaryDirectory(_ body: (String) throws -> Void) throws {
    var template = Array((FileManager.default.temporaryDirectory.path + "/basics-XXXXXX").utf8CString)
    let directory = try template.withUnsafeMutableBufferPointer { buffer in
        guard let start = buffer.baseAddress, let path = mkdtemp(start) else { throw SystemError(number: errno) }
        return String(cString: path)
    }
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try body(directory)
}

/// Creates a new file at `path` holding `text`.
private func createFile(_ path: String, holding text: String) throws {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
    guard descriptor >= 0 else { throw SystemError(number: errno) }
    defer { close(descriptor) }
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    guard written == bytes.count else { throw SystemError(number: errno) }
}
