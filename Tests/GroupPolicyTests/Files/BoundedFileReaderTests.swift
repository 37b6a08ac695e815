import Foundation
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one reader: the limit holds while reading (streams, special files), and files that are not
/// files are refused by name, never read and never called "permission denied".
@Suite struct BoundedFileReaderTests {
    static let pagemap = "/proc/self/pagemap"

    /// The error a read throws, or `nil` when it succeeds.
    static func failure(_ read: () throws(GroupPolicyError) -> [UInt8]) -> GroupPolicyError? {
        do {
            _ = try read()
            return nil
        } catch {
            return error
        }
    }

    @Test func readsARegularFileWhole() throws {
        let directory = try makeTemporaryDirectory("bounded-reader")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/a.json"
        try Data("0123456789".utf8).write(to: URL(fileURLWithPath: file))
        #expect(try BoundedFileReader.read(file, maximumBytes: 10) == Array("0123456789".utf8))
        let error = Self.failure { () throws(GroupPolicyError) in try BoundedFileReader.read(file, maximumBytes: 9) }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message == "\(file): file of 10 bytes is over the limit of 9 bytes")
    }

    @Test func stopsASpecialFileThatReportsNoSizeAtTheLimit() throws {
        try #require(FileManager.default.fileExists(atPath: Self.pagemap))
        // The file is gigabytes long; the old reader grew to 1.5 GB reading it.
        let error = Self.failure { () throws(GroupPolicyError) in
            try BoundedFileReader.read(Self.pagemap, maximumBytes: 1 << 20)
        }
        #expect(error?.code == .limitExceeded)
        #expect(
            error?.message
                == "/proc/self/pagemap: special file of more than 1048576 bytes is over the limit of 1048576 bytes"
        )
        // An odd limit needs an unaligned read, which this file refuses; the reader still stops.
        let odd = Self.failure { () throws(GroupPolicyError) in
            try BoundedFileReader.read(Self.pagemap, maximumBytes: 1001)
        }
        #expect(
            odd?.message == "/proc/self/pagemap: special file of more than 1001 bytes is over the limit of 1001 bytes"
        )
    }

    @Test func namesWhatIsNotAFile() throws {
        let directory = try makeTemporaryDirectory("bounded-reader")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/listening.sock"
        let socketDescriptor = try Self.bindUnixSocket(at: socketPath)
        defer { close(socketDescriptor) }
        let expected = [
            (directory, "\(directory) is a directory, not a file"),
            ("/dev/zero", "/dev/zero is a character device, not a file"),
            ("/dev/null", "/dev/null is a character device, not a file"),
            (socketPath, "\(socketPath) is a socket, not a file"),
            (directory + "/missing.json", "cannot read \(directory)/missing.json: no such file"),
        ]
        for (path, message) in expected {
            let error = Self.failure { () throws(GroupPolicyError) in
                try BoundedFileReader.read(path, maximumBytes: 1 << 20)
            }
            #expect(error?.code == .unreadableFile)
            #expect(error?.message == message)
        }
    }

    @Test func readsAFIFOWithAWriter() throws {
        let directory = try makeTemporaryDirectory("bounded-reader")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/response.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let content = Array(#"{ "groups": [] }"#.utf8)
        Self.writeInBackground(to: fifo) { descriptor in
            _ = content.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        }
        #expect(try BoundedFileReader.read(fifo, maximumBytes: 1 << 20) == content)
    }

    @Test func stopsAnEndlessFIFOAtTheLimit() throws {
        let directory = try makeTemporaryDirectory("bounded-reader")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/endless.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        // The writer stops when the reader closes (EPIPE, with SIGPIPE ignored).
        signal(SIGPIPE, SIG_IGN)
        Self.writeInBackground(to: fifo) { descriptor in
            let zeros = [UInt8](repeating: 0x20, count: 1 << 16)
            while zeros.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        }
        let error = Self.failure { () throws(GroupPolicyError) in
            try BoundedFileReader.read(fifo, maximumBytes: 100_000)
        }
        #expect(error?.code == .limitExceeded)
        #expect(error?.message == "\(fifo): stream of more than 100000 bytes is over the limit of 100000 bytes")
    }

    @Test func policiesReadThroughIt() throws {
        try #require(FileManager.default.fileExists(atPath: Self.pagemap))
        #expect {
            try Policy(contentsOfFile: Self.pagemap)
        } throws: { error in
            (error as? GroupPolicyError)?.message
                == "/proc/self/pagemap: special file of more than 33554432 bytes is over the limit of 33554432 bytes"
        }
        #expect {
            try Policy(contentsOfFile: "/dev/zero")
        } throws: { error in
            (error as? GroupPolicyError)?.message == "/dev/zero is a character device, not a file"
        }
    }

    /// Opens `fifo` for writing on a thread of its own (the open waits for the reader) and runs
    /// `body` with the descriptor, then closes it.
    static func writeInBackground(to fifo: String, _ body: @escaping @Sendable (Int32) -> Void) {
        Thread.detachNewThread {
            let descriptor = open(fifo, O_WRONLY)
            guard descriptor >= 0 else { return }
            body(descriptor)
            close(descriptor)
        }
    }

    /// A Unix-domain socket bound at `path` (the file a listening socket leaves in the directory).
    static func bindUnixSocket(at path: String) throws -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        try #require(descriptor >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        try #require(pathBytes.count < MemoryLayout.size(ofValue: address.sun_path))
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: pathBytes)
        }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0)
        return descriptor
    }
}
