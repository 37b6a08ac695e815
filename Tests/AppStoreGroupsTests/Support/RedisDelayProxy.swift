import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP proxy on 127.0.0.1 in front of a server of the test's: a Redis far away.
///
/// It holds every chunk a client sends for ``delay`` before passing it on (each chunk on its own
/// timer, so one connection's chunks do not queue behind each other), passes the server's bytes
/// back at once, and counts the calls in flight: connections that sent bytes the server has not
/// answered yet. ``hold(untilInFlight:atMost:)`` makes it pass nothing on until that many calls are
/// in flight at once, which proves a client's concurrency without timing anything.
final class RedisDelayProxy: @unchecked Sendable {
    let port: Int
    let delay: Duration
    private let upstreamPort: Int
    private let listener: LoopbackSocket
    private let condition = NSCondition()
    private var inFlight = 0
    private var peak = 0
    private var accepted = 0
    private var barrier: (count: Int, until: Date)?
    private var barrierReached: Bool?
    private var descriptors: [Int32] = []

    private final class Link: @unchecked Sendable {
        let client: Int32
        let upstream: Int32
        var chunks: [(due: Date, bytes: [UInt8])] = []
        var awaitingReply = false
        var clientClosed = false
        var threadsLeft = 3

        init(client: Int32, upstream: Int32) {
            self.client = client
            self.upstream = upstream
        }
    }

    init(upstreamPort: Int, delay: Duration) throws {
        listener = try LoopbackSocket(listening: ())
        port = listener.port
        self.upstreamPort = upstreamPort
        self.delay = delay
        let descriptor = listener.descriptor
        Thread.detachNewThread { [self] in
            while true {
                let client = accept(descriptor, nil, nil)
                guard client >= 0 else { return }
                guard let upstream = Self.dial(upstreamPort) else {
                    close(client)
                    continue
                }
                // The descriptors close only when all three threads of the link are done with
                // them, under the lock, so `stop()` never touches a number reused elsewhere.
                var one: Int32 = 1
                for socket in [client, upstream] {
                    _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                }
                condition.withLock {
                    accepted += 1
                    descriptors += [client, upstream]
                }
                let link = Link(client: client, upstream: upstream)
                Thread.detachNewThread { self.readClient(link) }
                Thread.detachNewThread { self.writeUpstream(link) }
                Thread.detachNewThread { self.readUpstream(link) }
            }
        }
    }

    deinit {
        stop()
    }

    /// Stops accepting and ends every connection.
    func stop() {
        shutdown(listener.descriptor, Int32(SHUT_RDWR))
        condition.withLock {
            for descriptor in descriptors { shutdown(descriptor, Int32(SHUT_RDWR)) }
            condition.broadcast()
        }
    }

    /// The most calls in flight at one time so far.
    var peakInFlight: Int { condition.withLock { peak } }
    /// Connections accepted so far.
    var connections: Int { condition.withLock { accepted } }

    /// Passes nothing on until `count` calls are in flight at once, or `atMost` has passed.
    func hold(untilInFlight count: Int, atMost: Duration) {
        condition.withLock {
            barrier = (count, Date().addingTimeInterval(Self.seconds(atMost)))
            barrierReached = nil
            peak = inFlight
        }
    }

    /// Whether the last hold ended because `count` calls were in flight (`false`: it timed out;
    /// `nil`: it has not ended).
    var holdWasReached: Bool? { condition.withLock { barrierReached } }

    /// Called by each of a link's three threads as it ends; the last closes the link's sockets.
    private func threadEnded(_ link: Link) {
        condition.withLock {
            link.threadsLeft -= 1
            guard link.threadsLeft == 0 else { return }
            descriptors.removeAll { $0 == link.client || $0 == link.upstream }
            close(link.client)
            close(link.upstream)
        }
    }

    private func readClient(_ link: Link) {
        defer { threadEnded(link) }
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(link.client, $0.baseAddress, $0.count, 0) }
            condition.withLock {
                if count > 0 {
                    if !link.awaitingReply {
                        link.awaitingReply = true
                        inFlight += 1
                        peak = max(peak, inFlight)
                    }
                    link.chunks.append((Date().addingTimeInterval(Self.seconds(delay)), Array(chunk[0..<count])))
                } else {
                    link.clientClosed = true
                    if link.awaitingReply {
                        link.awaitingReply = false
                        inFlight -= 1
                    }
                }
                condition.broadcast()
            }
            if count <= 0 { return }
        }
    }

    private func writeUpstream(_ link: Link) {
        defer { threadEnded(link) }
        while true {
            let bytes: [UInt8]? = condition.withLock {
                while true {
                    if let (count, until) = barrier {
                        if inFlight >= count {
                            barrier = nil
                            barrierReached = true
                            condition.broadcast()
                        } else if Date() >= until {
                            barrier = nil
                            barrierReached = false
                            condition.broadcast()
                        } else {
                            _ = condition.wait(until: until)
                            continue
                        }
                    }
                    guard let first = link.chunks.first else {
                        if link.clientClosed { return nil }
                        condition.wait()
                        continue
                    }
                    if first.due > Date() {
                        _ = condition.wait(until: first.due)
                        continue
                    }
                    link.chunks.removeFirst()
                    return first.bytes
                }
            }
            guard let bytes else {
                shutdown(link.upstream, Int32(SHUT_RDWR))
                return
            }
            guard Self.transmit(bytes, on: link.upstream) else { return }
        }
    }

    private func readUpstream(_ link: Link) {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        defer { threadEnded(link) }
        defer {
            shutdown(link.client, Int32(SHUT_RDWR))
            condition.withLock {
                link.clientClosed = true
                condition.broadcast()
            }
        }
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(link.upstream, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            condition.withLock {
                if link.awaitingReply {
                    link.awaitingReply = false
                    inFlight -= 1
                    condition.broadcast()
                }
            }
            guard Self.transmit(Array(chunk[0..<count]), on: link.client) else { return }
        }
    }

    private static func transmit(_ bytes: [UInt8], on descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    private static func dial(_ port: Int) -> Int32? {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
