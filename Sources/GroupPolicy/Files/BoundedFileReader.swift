import GroupPolicyBasics

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The one way the package reads a file or standard input: the size limit is enforced while
/// reading, so an endless stream or a special file costs at most the limit in memory and time.
///
/// - Regular files are checked against the limit by their size first, then read with the cap (a
///   file that grows, or a special file such as `/proc/self/pagemap` that reports a size of 0, stops
///   at the limit).
/// - FIFOs are streams: they are opened like `cat` opens them (waiting for a writer when there is
///   none yet) and read with the cap.
/// - Directories, character and block devices and sockets named by a path are refused with one
///   line saying what they are; they are never opened.
/// - Standard input is read as a stream whatever it is (a pipe, a file, a terminal, `/dev/zero`),
///   always with the cap.
///
/// Every read requests at most the limit plus one byte in total, except that a special file that
/// refuses unaligned reads (`EINVAL`) is asked for a multiple of 8 bytes once.
package enum BoundedFileReader {
    /// The largest single `read`; also the size of the reusable buffer.
    static let chunkSize = 1 << 16

    /// Reads the file at `path`, following symbolic links.
    ///
    /// - Parameters:
    ///   - path: The file; messages print it as given.
    ///   - maximumBytes: The most bytes accepted; one more byte is an error.
    /// - Returns: The file's bytes.
    /// - Throws: A ``GroupPolicyError``: `unreadableFile` (no such file, permission denied, not a
    ///   file: "X is a character device, not a file"), or `limitExceeded`.
    package static func read(_ path: String, maximumBytes: Int) throws(GroupPolicyError) -> [UInt8] {
        let status = try readableStatus(path) { () throws(SystemError) in try FileStatus(path: path) }
        // A FIFO without a writer blocks in `open` until one comes, as `cat` does: naming a FIFO
        // means someone is about to write to it. Anything else opens without blocking, so a FIFO
        // swapped in after the `stat` cannot hang the open.
        let waitForWriter = status.kind == .fifo
        let descriptor = try openForReading(path, blocking: waitForWriter)
        defer { _ = close(descriptor) }
        let opened = try readableStatus(path) { () throws(SystemError) in try FileStatus(descriptor: descriptor) }
        if opened.kind == .regular && opened.size > maximumBytes {
            throw GroupPolicyError(
                code: .limitExceeded,
                message: "\(path): file of \(opened.size) bytes is over the limit of \(maximumBytes) bytes"
            )
        }
        if !waitForWriter { makeBlocking(descriptor) }
        return try readAll(
            descriptor,
            name: path,
            // A regular file that reports no size but has content is a special one (`/proc`).
            noun: opened.kind != .regular ? "stream" : opened.size == 0 ? "special file" : "file",
            expectedSize: opened.kind == .regular ? opened.size : nil,
            maximumBytes: maximumBytes
        )
    }

    /// Reads a regular file, never blocking: a path that names anything else (a FIFO, a device, a
    /// socket, a directory) is refused without being opened, and the file is opened without
    /// waiting (`O_NONBLOCK`) and without following a symbolic link in its last component
    /// (`O_NOFOLLOW`), then checked again on the open descriptor, so a FIFO swapped in after the
    /// check is refused too, never waited on.
    ///
    /// - Parameters:
    ///   - path: The file, its symbolic links already resolved (a real path).
    ///   - name: How messages name the file.
    ///   - maximumBytes: The most bytes accepted; one more byte is an error.
    /// - Returns: The file's bytes.
    /// - Throws: A ``GroupPolicyError``: `unreadableFile` ("X is a FIFO, not a regular file"; no
    ///   such file; permission denied), or `limitExceeded`.
    package static func readRegularFile(
        _ path: String,
        name: String,
        maximumBytes: Int
    ) throws(GroupPolicyError) -> [UInt8] {
        func refuseUnlessRegular(_ status: FileStatus) throws(GroupPolicyError) {
            guard status.kind == .regular else {
                throw GroupPolicyError(
                    code: .unreadableFile,
                    message: "\(name) is \(status.kind.phrase), not a regular file"
                )
            }
        }
        let status: FileStatus
        do {
            status = try FileStatus(path: path)
        } catch {
            throw unreadable(name, error)
        }
        try refuseUnlessRegular(status)
        var descriptor: Int32 = -1
        while descriptor < 0 {
            descriptor = systemOpen(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW)
            guard descriptor < 0 else { break }
            let number = errno
            guard number == EINTR else {
                // A symbolic link put in the file's place since it was resolved.
                if number == ELOOP {
                    throw GroupPolicyError(
                        code: .unreadableFile,
                        message: "\(name) is a symbolic link, not a regular file"
                    )
                }
                throw unreadable(name, SystemError(number: number))
            }
        }
        defer { _ = close(descriptor) }
        let opened: FileStatus
        do {
            opened = try FileStatus(descriptor: descriptor)
        } catch {
            throw unreadable(name, error)
        }
        try refuseUnlessRegular(opened)
        if opened.size > maximumBytes {
            throw GroupPolicyError(
                code: .limitExceeded,
                message: "\(name): file of \(opened.size) bytes is over the limit of \(maximumBytes) bytes"
            )
        }
        makeBlocking(descriptor)
        return try readAll(
            descriptor,
            name: name,
            noun: opened.size == 0 ? "special file" : "file",
            expectedSize: opened.size,
            maximumBytes: maximumBytes
        )
    }

    /// Reads standard input to its end, whatever it is connected to, with the cap.
    ///
    /// - Parameter maximumBytes: The most bytes accepted; one more byte is an error.
    /// - Returns: The bytes read.
    /// - Throws: A ``GroupPolicyError``: `unreadableFile` or `limitExceeded`.
    static func readStandardInput(maximumBytes: Int) throws(GroupPolicyError) -> [UInt8] {
        let status = try? FileStatus(descriptor: STDIN_FILENO)
        let name = "standard input"
        if let status, status.kind == .regular, status.size > maximumBytes {
            throw GroupPolicyError(
                code: .limitExceeded,
                message: "\(name): file of \(status.size) bytes is over the limit of \(maximumBytes) bytes"
            )
        }
        return try readAll(
            STDIN_FILENO,
            name: name,
            noun: "stream",
            expectedSize: status?.kind == .regular ? status?.size : nil,
            maximumBytes: maximumBytes
        )
    }

    /// Reads standard input for `-`, and the file at `path` otherwise.
    ///
    /// - Parameters:
    ///   - path: A file, or `-` for standard input.
    ///   - maximumBytes: The most bytes accepted; one more byte is an error.
    /// - Returns: The bytes read.
    /// - Throws: A ``GroupPolicyError``: `unreadableFile` or `limitExceeded`.
    package static func read(pathOrStandardInput path: String, maximumBytes: Int) throws(GroupPolicyError) -> [UInt8] {
        path == "-" ? try readStandardInput(maximumBytes: maximumBytes) : try read(path, maximumBytes: maximumBytes)
    }

    /// What `stat` says about `path` (by its name, or by the descriptor opened for it), refused
    /// unless it is a file to read.
    private static func readableStatus(
        _ path: String,
        _ stat: () throws(SystemError) -> FileStatus
    ) throws(GroupPolicyError) -> FileStatus {
        let status: FileStatus
        do {
            status = try stat()
        } catch {
            throw unreadable(path, error)
        }
        try refuseUnlessReadable(status.kind, path)
        return status
    }

    private static func refuseUnlessReadable(_ kind: FileStatus.Kind, _ path: String) throws(GroupPolicyError) {
        switch kind {
        case .regular, .fifo:
            return
        case .directory, .characterDevice, .blockDevice, .socket, .other:
            throw GroupPolicyError(code: .unreadableFile, message: "\(path) is \(kind.phrase), not a file")
        }
    }

    private static func openForReading(_ path: String, blocking: Bool) throws(GroupPolicyError) -> Int32 {
        var flags = O_RDONLY | O_CLOEXEC | O_NOCTTY
        if !blocking { flags |= O_NONBLOCK }
        while true {
            let descriptor = systemOpen(path, flags)
            if descriptor >= 0 { return descriptor }
            let number = errno
            if number == EINTR { continue }
            throw unreadable(path, SystemError(number: number))
        }
    }

    /// Clears `O_NONBLOCK`, so that reading a stream waits for data instead of failing.
    private static func makeBlocking(_ descriptor: Int32) {
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 && flags & O_NONBLOCK != 0 {
            _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK)
        }
    }

    /// Reads to the end of the descriptor, never keeping (or, but for one aligned retry, asking
    /// for) more than `maximumBytes + 1` bytes.
    private static func readAll(
        _ descriptor: Int32,
        name: String,
        noun: String,
        expectedSize: Int?,
        maximumBytes: Int
    ) throws(GroupPolicyError) -> [UInt8] {
        let limit = max(0, maximumBytes)
        let cap = limit == Int.max ? Int.max : limit + 1
        var bytes: [UInt8] = []
        if let expectedSize { bytes.reserveCapacity(min(expectedSize, limit) + 1) }
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var aligned = false
        while true {
            let room = cap - bytes.count
            var request = min(chunkSize, room)
            if aligned { request = min(chunkSize, (request + 7) & ~7) }
            let count = chunk.withUnsafeMutableBytes { buffer in
                systemRead(descriptor, buffer.baseAddress, request)
            }
            if count < 0 {
                let number = errno
                switch number {
                case EINTR:
                    continue
                case EAGAIN, EWOULDBLOCK:
                    // A stream someone else left non-blocking (standard input shared with a parent).
                    var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    _ = poll(&entry, 1, -1)
                    continue
                case EINVAL where !aligned && request % 8 != 0:
                    // Some special files (`/proc/self/pagemap`) only accept reads of whole 8-byte
                    // entries.
                    aligned = true
                    continue
                default:
                    let reason = SystemError(number: number).reason
                    throw GroupPolicyError(
                        code: .unreadableFile,
                        message: "cannot read \(name): \(reason)"
                    )
                }
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<min(count, room)])
            if bytes.count > limit {
                throw GroupPolicyError(
                    code: .limitExceeded,
                    message: "\(name): \(noun) of more than \(limit) bytes is over the limit of \(limit) bytes"
                )
            }
        }
    }

    private static func unreadable(_ path: String, _ error: SystemError) -> GroupPolicyError {
        GroupPolicyError(code: .unreadableFile, message: "cannot read \(path): \(error.reason)")
    }
}

// At file scope, so that the enum's own `read` does not hide the system calls.
private func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags)
}

private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
