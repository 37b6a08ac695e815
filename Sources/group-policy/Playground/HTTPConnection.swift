import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One accepted connection of the playground's server, non-blocking: every read and write waits
/// for the socket with `poll` and gives up at a deadline, however slowly the peer sends or reads.
struct HTTPConnection {
    let descriptor: Int32

    /// Why a request could not be read: a refusal to answer with, or a peer that left (no status).
    struct Failure: Error {
        var status: HTTPStatus?
        var message: String
    }

    /// Takes an accepted socket and makes it non-blocking.
    init(_ descriptor: Int32) {
        self.descriptor = descriptor
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    /// Reads a request head up to its blank line, at most `maximumBytes` before it.
    ///
    /// - Returns: The head's bytes, without the blank line, and the bytes read after it (the
    ///   body's first bytes).
    func readHead(
        maximumBytes: Int,
        until deadline: ContinuousClock.Instant
    ) throws(Failure) -> (head: [UInt8], rest: [UInt8]) {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let searchFrom = max(0, buffer.count - 3)
            buffer += chunk[0..<(try receive(into: &chunk, until: deadline))]
            if let end = Self.blankLine(in: buffer, from: searchFrom) {
                guard end <= maximumBytes else { break }
                return (Array(buffer[..<end]), Array(buffer[(end + 4)...]))
            }
            if buffer.count > maximumBytes { break }
        }
        throw Failure(status: .headerFieldsTooLarge, message: "request head over the limit of \(maximumBytes) bytes")
    }

    /// Reads a body of `count` bytes, of which `start` came with the head.
    func readBody(count: Int, start: [UInt8], until deadline: ContinuousClock.Instant) throws(Failure) -> [UInt8] {
        var body = Array(start.prefix(count))
        body.reserveCapacity(count)
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while body.count < count {
            let received = try receive(into: &chunk, until: deadline)
            body += chunk[0..<min(received, count - body.count)]
        }
        return body
    }

    /// Writes all of `bytes`, or as much as the peer takes before the deadline.
    func write(_ bytes: [UInt8], until deadline: ContinuousClock.Instant) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { buffer in
                buffer.baseAddress.map { Foundation.send(descriptor, $0 + offset, buffer.count - offset, 0) } ?? -1
            }
            if sent > 0 {
                offset += sent
            } else if sent < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                guard wait(for: POLLOUT, until: deadline) else { return }
            } else {
                return  // The peer is gone (SIGPIPE is ignored, so this is an error, not an exit).
            }
        }
    }

    /// Ends the connection after its answer: no more writing, then a moment to read (and drop) what
    /// the peer still sends, such as a body refused unread, so that closing with it unread does not
    /// reset the connection and lose the answer.
    func finish() {
        shutdown(descriptor, Int32(SHUT_WR))
        let until = ContinuousClock.now + .seconds(1)
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while (try? receive(into: &chunk, until: until)) != nil {}
        close(descriptor)
    }

    /// Receives some bytes: at least one, or the peer closing or the deadline ends the request.
    private func receive(into chunk: inout [UInt8], until deadline: ContinuousClock.Instant) throws(Failure) -> Int {
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count > 0 { return count }
            if count == 0 || !(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                throw Failure(status: nil, message: "the peer closed the connection")
            }
            guard wait(for: POLLIN, until: deadline) else {
                throw Failure(status: .requestTimeout, message: "the request was not sent whole in time")
            }
        }
    }

    /// Waits until the socket is ready for `events`; false when the deadline passes first.
    private func wait(for events: Int32, until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let remaining = deadline - .now
            guard remaining > .zero else { return false }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
            var entry = pollfd(fd: descriptor, events: Int16(events), revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return false }
        }
    }

    /// Where `\r\n\r\n` starts in `bytes`, looking from `start`.
    private static func blankLine(in bytes: [UInt8], from start: Int) -> Int? {
        var index = start
        while index + 4 <= bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }
}
