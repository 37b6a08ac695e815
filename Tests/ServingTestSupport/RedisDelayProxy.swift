import Foundation

/// A TCP proxy on 127.0.0.1 in front of a server of the test's: a Redis far away.
///
/// It holds every chunk a client sends for ``delay`` before passing it on (each chunk on its own timer, so one
/// connection's chunks do not queue behind each other), passes the server's bytes back at once, and counts the calls in
/// flight: connections that sent bytes the server has not answered yet. ``hold(untilInFlight:atMost:)`` makes it pass
/// nothing on until that many calls are in flight at once, which proves a client's concurrency without timing anything.
/// ``roundTrips`` counts the calls a client made through it: each time a connection that was not waiting for a reply
/// sends bytes.
///
/// One thread drives every socket with `poll`, so the proxy's own cost stays small and its timers exact however many
/// connections it carries.
package final class RedisDelayProxy: @unchecked Sendable {
    package let port: Int
    package let delay: Duration
    private let upstreamPort: Int
    private let listener: LoopbackSocket
    private let wake: (read: Int32, write: Int32)
    private let lock = NSLock()
    private var peak = 0
    private var trips = 0
    private var barrier: (count: Int, until: ContinuousClock.Instant)?
    private var barrierReached: Bool?
    private var isStopped = false

    private final class Link {
        let client: Int32
        let upstream: Int32
        var toUpstream: [(due: ContinuousClock.Instant, bytes: [UInt8])] = []
        var awaitingReply = false

        init(client: Int32, upstream: Int32) {
            self.client = client
            self.upstream = upstream
        }
    }

    package init(upstreamPort: Int, delay: Duration) throws {
        listener = try LoopbackSocket(listening: ())
        port = listener.port
        self.upstreamPort = upstreamPort
        self.delay = delay
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw HarnessError(message: "pipe failed") }
        wake = (ends[0], ends[1])
        for descriptor in [listener.descriptor, wake.read] { LoopbackSocket.makeNonBlocking(descriptor) }
        Thread.detachNewThread { [self] in run() }
    }

    /// Stops the proxy: every connection it carries is closed.
    package func stop() {
        lock.withLock {
            guard !isStopped else { return }
            isStopped = true
            var byte: UInt8 = 1
            _ = write(wake.write, &byte, 1)
        }
    }

    /// The most calls in flight at one time so far.
    package var peakInFlight: Int { lock.withLock { peak } }
    /// Round trips so far: the times a connection that was not waiting for a reply sent bytes
    /// (a call's commands and their echo travel in one write, and wait for their replies together).
    package var roundTrips: Int { lock.withLock { trips } }

    /// Passes nothing on until `count` calls are in flight at once, or `atMost` has passed.
    package func hold(untilInFlight count: Int, atMost: Duration) {
        lock.withLock {
            barrier = (count, .now + atMost)
            barrierReached = nil
            peak = 0
        }
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    /// Whether the last hold ended because `count` calls were in flight (`false`: it timed out; `nil`: not ended yet).
    package var holdWasReached: Bool? { lock.withLock { barrierReached } }

    private func run() {
        var links: [Link] = []
        var inFlight = 0
        var chunk = [UInt8](repeating: 0, count: 65_536)
        defer {
            for link in links {
                close(link.client)
                close(link.upstream)
            }
            close(wake.read)
            close(wake.write)
        }
        func setAwaiting(_ link: Link, _ awaiting: Bool) {
            guard link.awaitingReply != awaiting else { return }
            link.awaitingReply = awaiting
            inFlight += awaiting ? 1 : -1
            lock.withLock {
                peak = max(peak, inFlight)
                if awaiting { trips += 1 }
            }
        }
        while true {
            let now = ContinuousClock.now
            // Whether chunks may pass, and until when the hold lasts.
            let (stopped, holdUntil) = lock.withLock { () -> (Bool, ContinuousClock.Instant?) in
                if let (count, until) = barrier {
                    if inFlight < count, now < until { return (isStopped, until) }
                    barrier = nil
                    barrierReached = inFlight >= count
                }
                return (isStopped, nil)
            }
            if stopped { return }
            var next = holdUntil
            if holdUntil == nil {
                for link in links {
                    while let first = link.toUpstream.first, first.due <= now {
                        link.toUpstream.removeFirst()
                        LoopbackSocket.transmit(first.bytes, on: link.upstream)
                    }
                    if let first = link.toUpstream.first { next = min(next ?? first.due, first.due) }
                }
            }
            var descriptors = ([listener.descriptor, wake.read] + links.flatMap { [$0.client, $0.upstream] }).map {
                pollfd(fd: $0, events: Int16(POLLIN), revents: 0)
            }
            var timeout: Int32 = -1
            if let next {
                let (seconds, attoseconds) = now.duration(to: next).components
                timeout = max(0, Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1))
            }
            guard poll(&descriptors, nfds_t(descriptors.count), timeout) > 0 else { continue }
            if descriptors[1].revents != 0 {
                while chunk.withUnsafeMutableBytes({ read(wake.read, $0.baseAddress, $0.count) }) > 0 {}
            }
            if descriptors[0].revents != 0 {
                let client = accept(listener.descriptor, nil, nil)
                if client >= 0, let upstream = LoopbackSocket.dial(upstreamPort) {
                    LoopbackSocket.setNoDelay(client)
                    LoopbackSocket.setNoDelay(upstream)
                    links.append(Link(client: client, upstream: upstream))
                } else if client >= 0 {
                    close(client)
                }
            }
            var ended: [Link] = []
            for (index, link) in links.enumerated() {
                let clientEvents = descriptors.count > 2 + index * 2 ? descriptors[2 + index * 2].revents : 0
                let upstreamEvents = descriptors.count > 3 + index * 2 ? descriptors[3 + index * 2].revents : 0
                if clientEvents != 0 {
                    let count = chunk.withUnsafeMutableBytes { recv(link.client, $0.baseAddress, $0.count, 0) }
                    if count > 0 {
                        setAwaiting(link, true)
                        link.toUpstream.append((.now + delay, Array(chunk[0..<count])))
                    } else {
                        ended.append(link)
                        continue
                    }
                }
                if upstreamEvents != 0 {
                    let count = chunk.withUnsafeMutableBytes { recv(link.upstream, $0.baseAddress, $0.count, 0) }
                    if count > 0 {
                        setAwaiting(link, false)
                        LoopbackSocket.transmit(Array(chunk[0..<count]), on: link.client)
                    } else {
                        ended.append(link)
                    }
                }
            }
            for link in ended {
                setAwaiting(link, false)
                close(link.client)
                close(link.upstream)
                links.removeAll { $0 === link }
            }
        }
    }
}
