import AppStoreGroups
import GroupDecisions

/// One non-blocking TCP connection to Redis speaking RESP2, driven by ``RedisConnectionPool``'s
/// thread (and touched by no other, which is what makes the class safe to hand to it).
///
/// A connection runs one ``RedisRequest`` at a time: it writes the request's commands and an
/// `ECHO` of a value unique in the pool (the sentinel) in one write, then reads exactly one reply
/// per command and the sentinel's echo. A reply that is not where it belongs (a reply sent twice, a
/// reply nobody asked for) puts something other than the sentinel in the sentinel's place, so the
/// replies of a request are only ever taken when they are provably its own.
final class RedisConnection: @unchecked Sendable {
    /// Where the connection is in its life.
    enum State {
        /// Connecting to the address at `addressIndex` of the pool's list, until `deadline`.
        case connecting(addressIndex: Int, deadline: ContinuousClock.Instant)
        /// In the pool, unused since the instant.
        case idle(since: ContinuousClock.Instant)
        /// Running a request.
        case busy(RedisRequest)
    }

    let descriptor: Int32
    var state: State
    /// How many requests finished on it: a connection that served none is one opened for the
    /// request it runs.
    private(set) var servedCount = 0

    private var output: [UInt8] = []
    private var outputOffset = 0
    private var input: [UInt8] = []
    private var inputOffset = 0
    private var replies: [RESPReply] = []
    private var expectedReplies = 0
    private var sentinel: [UInt8] = []
    private var sentBytes = 0
    private var peerClosed = false
    private var receivedBytes = 0
    private let parser: RESPParser
    private let maximumBufferedBytes: Int

    /// Starts connecting to `address`.
    init(
        address: RedisSocketAddress,
        addressIndex: Int,
        deadline: ContinuousClock.Instant,
        maximumReplyBytes: Int
    ) throws(RedisFailure) {
        let (descriptor, connected) = try RedisSockets.connect(to: address)
        self.descriptor = descriptor
        state = connected ? .idle(since: .now) : .connecting(addressIndex: addressIndex, deadline: deadline)
        parser = RESPParser(maximumBulkBytes: maximumReplyBytes, maximumArrayCount: 100_000)
        maximumBufferedBytes = maximumReplyBytes + 65_536
    }

    deinit {
        RedisSockets.closeDescriptor(descriptor)
    }

    /// Whether the request has bytes left to send.
    var wantsToWrite: Bool { outputOffset < output.count }

    /// Whether any byte of the request reached the socket: from then on the server may have run it.
    var sentAnything: Bool { sentBytes > 0 }

    /// Whether any byte of a reply arrived for the request.
    var receivedAnything: Bool { receivedBytes > 0 }

    /// Whether bytes are buffered beyond the replies taken (a reply nobody asked for), or the
    /// server closed the connection.
    var holdsUnreadBytes: Bool { inputOffset < input.count || peerClosed }

    /// Whether the server has sent nothing since the last reply and has not closed: the only state
    /// in which a used connection may run another request.
    var isQuiet: Bool {
        guard !holdsUnreadBytes else { return false }
        var probe: [UInt8] = [0]
        let received = RedisSockets.receive(descriptor, into: &probe, peek: true)
        return received < 0 && RedisSockets.wouldBlock
    }

    /// Takes `request` and prepares its bytes: its commands, then `ECHO sentinel`.
    func begin(_ request: RedisRequest, sentinel: [UInt8]) {
        state = .busy(request)
        self.sentinel = sentinel
        output.removeAll(keepingCapacity: true)
        for command in request.commands { output += RESPReply.command(command) }
        output += RESPReply.command([Array("ECHO".utf8), sentinel])
        outputOffset = 0
        sentBytes = 0
        replies = []
        expectedReplies = request.commands.count + 1
        receivedBytes = 0
    }

    /// Sends what the socket takes without blocking.
    func flush() throws(RedisFailure) {
        while outputOffset < output.count {
            let sent = RedisSockets.send(descriptor, output[outputOffset...])
            if sent < 0 {
                if RedisSockets.wouldBlock { return }
                let lost = RedisSockets.connectionWasLost
                throw RedisFailure("sending failed: \(RedisSockets.errorText())", kind: lost ? .connectionLost : .other)
            }
            outputOffset += sent
            sentBytes += sent
        }
        output.removeAll(keepingCapacity: output.count <= 65_536)
        outputOffset = 0
    }

    /// Reads what has arrived without blocking, through `chunk` (the pool's one read buffer).
    ///
    /// - Returns: The request's replies (the sentinel's echo checked and removed) once all have
    ///   arrived; `nil` while some are missing.
    func receive(using chunk: inout [UInt8]) throws(RedisFailure) -> [RESPReply]? {
        while true {
            let received = RedisSockets.receive(descriptor, into: &chunk)
            if received == 0 {
                // Replies complete before the close still count; the connection goes either way.
                peerClosed = true
                break
            }
            if received < 0 {
                if RedisSockets.wouldBlock { break }
                let lost = RedisSockets.connectionWasLost
                throw RedisFailure(
                    "receiving failed: \(RedisSockets.errorText())",
                    kind: lost ? .connectionLost : .other
                )
            }
            receivedBytes += received
            input += chunk[0..<received]
            guard input.count - inputOffset <= maximumBufferedBytes else {
                throw RedisFailure("the server's reply is too large", kind: .protocolViolation)
            }
        }
        while replies.count < expectedReplies {
            do {
                guard let (reply, length) = try parser.parse(input[inputOffset...]) else { break }
                replies.append(reply)
                inputOffset += length
            } catch {
                switch error {
                case .malformed(let why):
                    throw RedisFailure("the server's reply is not RESP: \(why)", kind: .protocolViolation)
                case .tooLarge(let why):
                    throw RedisFailure("the server's reply is too large: \(why)", kind: .protocolViolation)
                }
            }
        }
        guard replies.count == expectedReplies else {
            if peerClosed { throw RedisFailure("the server closed the connection", kind: .connectionLost) }
            return nil
        }
        guard replies.last == .bulk(sentinel) else {
            throw RedisFailure("the replies were not the ones asked for", kind: .protocolViolation)
        }
        servedCount += 1
        if inputOffset == input.count {
            input.removeAll(keepingCapacity: input.count <= 65_536)
            inputOffset = 0
        }
        return Array(replies.dropLast())
    }
}
