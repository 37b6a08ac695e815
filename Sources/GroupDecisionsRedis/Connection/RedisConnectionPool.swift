import AppStoreGroups
import GroupDecisions
import GroupPolicy
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The connections of one ``RedisGroupsCache`` and the thread that drives them.
///
/// Callers never block: ``submit(_:)`` hands a ``RedisRequest`` over under a short lock and wakes
/// the pool's thread through a pipe; the caller's task waits on a continuation. The thread sleeps
/// in `poll` on every socket of the pool and the pipe, so any number of calls are in flight at
/// once, up to ``Settings/maximumConnections`` on the wire and the rest queued in order of arrival.
/// Every deadline is kept by the same thread: a queued call, a connection attempt and a call
/// waiting for its replies all end when their time is up.
///
/// A connection goes back to the pool only when its replies were exactly the ones asked for and
/// nothing more is readable; any surprise (a timeout, a cancellation, a reply too many, a protocol
/// error, the peer closing) closes it. An idle connection the server closes or writes to is closed
/// at once, and one idle for ``Settings/idleLifetime`` is closed too.
///
/// The thread starts with the first call and ends with ``close()``, which the cache also calls when
/// it goes away. Nothing here is shared between pools.
final class RedisConnectionPool: @unchecked Sendable {
    struct Settings: Sendable {
        var host: String
        var port: Int
        var maximumConnections: Int
        var maximumReplyBytes: Int
        var connectTimeout: Duration
        var idleLifetime: Duration
    }

    /// What the pool has done, for tests and figures.
    struct Statistics: Sendable, Equatable {
        /// Connections opened so far.
        var connectionsOpened = 0
        /// Connections closed after a surprise (never those closed for being idle too long).
        var connectionsDiscarded = 0
        /// Requests sent again on a fresh connection.
        var retries = 0
        /// The most requests running on connections at one time.
        var peakRunning = 0
        /// Idle connections right now.
        var idle = 0
        /// Requests waiting for a connection right now.
        var waiting = 0
    }

    /// What callers hand to the thread, under the lock.
    private struct Inbox {
        var requests: [RedisRequest] = []
        var cancelled: [RedisRequest] = []
        var resolution: Result<[RedisSocketAddress], RedisFailure>?
        var isClosed = false
        var hasStarted = false
        var hasExited = false
        var wakeDescriptor: Int32 = -1
    }

    let settings: Settings
    private let inbox = Mutex(Inbox())
    private let statisticsBox = Mutex(Statistics())

    // The pool thread's own state.
    private var wakeReadDescriptor: Int32 = -1
    private var connections: [RedisConnection] = []
    private var queue = RedisRequestQueue()
    /// Requests sent again after their pooled connection died: each waits for a connection opened
    /// for it, since the other pooled connections may be dead too.
    private var retries = RedisRequestQueue()
    /// The requests waiting in both queues (cancelled ones leave the count at once, the queues
    /// when they reach the front).
    private var waitingCount = 0
    private var addresses: [RedisSocketAddress] = []
    private var addressesResolvedAt: ContinuousClock.Instant?
    private var isResolving = false
    private var sentinelCounter: UInt64 = 0
    /// The buffer every connection reads into: one thread reads, one read at a time.
    private var chunk = [UInt8](repeating: 0, count: 65_536)
    private let sentinelPrefix = String(UInt64.random(in: 0...UInt64.max), radix: 16)

    init(settings: Settings) {
        self.settings = settings
    }

    /// What the pool has done so far.
    var statistics: Statistics { statisticsBox.withLock { $0 } }

    // MARK: Callers

    /// Queues a request; it fails at once when the store is closed or the thread cannot start.
    func submit(_ request: RedisRequest) {
        let failure: RedisFailure? = inbox.withLock { box in
            if box.isClosed { return .closed }
            if !box.hasStarted {
                guard let (readEnd, writeEnd) = RedisSockets.makePipe() else {
                    return RedisFailure("cannot create the pool's wake-up pipe: \(RedisSockets.errorText())")
                }
                wakeReadDescriptor = readEnd
                guard RedisSockets.startThread({ self.run() }) else {
                    RedisSockets.closeDescriptor(readEnd)
                    RedisSockets.closeDescriptor(writeEnd)
                    return RedisFailure("cannot start the pool's thread")
                }
                box.hasStarted = true
                box.wakeDescriptor = writeEnd
            }
            box.requests.append(request)
            RedisSockets.wake(box.wakeDescriptor)
            return nil
        }
        if let failure { request.finish(.failure(failure)) }
    }

    /// Ends a request as cancelled at once, and lets the thread drop it (closing its connection
    /// when it was running: its replies may still come).
    func cancel(_ request: RedisRequest) {
        guard request.finish(.failure(.cancelled)) else { return }
        inbox.withLock { box in
            guard box.hasStarted, !box.hasExited else { return }
            box.cancelled.append(request)
            RedisSockets.wake(box.wakeDescriptor)
        }
    }

    /// Fails every queued and running request, closes every connection and ends the thread.
    ///
    /// Later calls fail at once. Calling it again does nothing.
    func close() {
        inbox.withLock { box in
            guard !box.isClosed else { return }
            box.isClosed = true
            if box.hasStarted, !box.hasExited { RedisSockets.wake(box.wakeDescriptor) }
        }
    }

    // MARK: The thread

    private func run() {
        var descriptors: [pollfd] = []
        while true {
            // Drained before the inbox is read: a request handed over after the read writes a byte
            // this drain has not taken, so the next `poll` returns at once.
            RedisSockets.drain(wakeReadDescriptor)
            let (requests, cancelled, resolution, isClosed) = inbox.withLock { box in
                defer {
                    box.requests = []
                    box.cancelled = []
                    box.resolution = nil
                }
                return (box.requests, box.cancelled, box.resolution, box.isClosed)
            }
            if isClosed {
                shutDown(failing: requests)
                return
            }
            if let resolution { resolved(resolution) }
            for request in cancelled { dropCancelled(request) }
            for request in requests where !request.isFinished { enqueue(request) }
            let now = ContinuousClock.now
            expire(now: now)
            dispatchIdleConnections()
            openConnections(now: now)
            updateStatistics()

            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: wakeReadDescriptor, events: Int16(POLLIN), revents: 0))
            for connection in connections {
                var events = Int16(POLLIN)
                switch connection.state {
                case .connecting: events = Int16(POLLOUT)
                case .busy: if connection.wantsToWrite { events |= Int16(POLLOUT) }
                case .idle: break
                }
                descriptors.append(pollfd(fd: connection.descriptor, events: events, revents: 0))
            }
            let ready = RedisSockets.poll(&descriptors, milliseconds: pollTimeout(now: .now))
            guard ready > 0 else { continue }
            // Events are matched by descriptor: handling one may close and remove others.
            for entry in descriptors.dropFirst() where entry.revents != 0 {
                guard let connection = connections.first(where: { $0.descriptor == entry.fd }) else { continue }
                handle(connection, events: entry.revents)
            }
        }
    }

    private func handle(_ connection: RedisConnection, events: Int16) {
        switch connection.state {
        case .connecting:
            if let failure = RedisSockets.connectionError(connection.descriptor) {
                connectFailed(connection, failure)
            } else {
                connection.state = .idle(since: .now)
                offer(connection)
            }
        case .idle:
            // The server wrote to, or closed, a connection nobody is using.
            discard(connection)
        case .busy(let request):
            do {
                if events & Int16(POLLOUT) != 0 { try connection.flush() }
                if events & Int16(POLLIN | POLLHUP | POLLERR) != 0, let replies = try connection.receive(using: &chunk)
                {
                    // Answered in full and in place; anything more makes the connection unfit.
                    if connection.holdsUnreadBytes { discard(connection) } else { offer(connection) }
                    finish(request, .success(replies))
                }
            } catch {
                failed(request, on: connection, error)
            }
        }
    }

    private func finish(_ request: RedisRequest, _ result: Result<[RESPReply], RedisFailure>) {
        if request.stage == .waiting { waitingCount -= 1 }
        request.stage = .done
        request.finish(result)
    }

    /// A request's connection failed: the connection goes, and the request is sent again once on
    /// a fresh connection when that cannot run it twice, or fails.
    ///
    /// Sent again only when the connection had served earlier requests (so it was pooled and may
    /// have died idle, as after a server restart), no byte of a reply arrived, the connection was
    /// lost (not timed out or answered wrongly), and the commands are idempotent or none of their
    /// bytes reached the socket. A fresh connection failing the same way fails the call.
    private func failed(_ request: RedisRequest, on connection: RedisConnection, _ failure: RedisFailure) {
        discard(connection)
        let retry =
            failure.kind == .connectionLost && connection.servedCount > 0 && !connection.receivedAnything
            && (request.isIdempotent || !connection.sentAnything) && !request.isRetry && !request.isFinished
        if retry {
            request.isRetry = true
            statisticsBox.withLock { $0.retries += 1 }
            enqueue(request)
        } else {
            finish(request, .failure(failure))
        }
    }

    // MARK: Queue and connections

    private func enqueue(_ request: RedisRequest) {
        request.stage = .waiting
        waitingCount += 1
        if request.isRetry { retries.pushLast(request) } else { queue.pushLast(request) }
    }

    /// The oldest request still waiting in `waiting`, removed from it.
    private func nextWaiting(in waiting: inout RedisRequestQueue) -> RedisRequest? {
        while let request = waiting.popFirst() {
            guard request.stage == .waiting else { continue }
            if !request.isFinished { return request }
            finish(request, .failure(.cancelled))
        }
        return nil
    }

    /// The oldest request waiting in either queue, removed from it.
    private func nextWaiting() -> RedisRequest? {
        nextWaiting(in: &retries) ?? nextWaiting(in: &queue)
    }

    /// Gives a connection to the oldest waiting request it may serve, or keeps it idle.
    ///
    /// A connection opened for nobody in particular serves a retry first; a used one serves only
    /// first attempts, and only when nothing arrived on it since its last reply.
    private func offer(_ connection: RedisConnection) {
        let isFresh = connection.servedCount == 0
        if !isFresh, !connection.isQuiet {
            discard(connection)
            return
        }
        guard let request = isFresh ? nextWaiting() : nextWaiting(in: &queue) else {
            connection.state = .idle(since: .now)
            return
        }
        waitingCount -= 1
        request.stage = .running
        sentinelCounter &+= 1
        connection.begin(request, sentinel: Array("\(sentinelPrefix):\(sentinelCounter)".utf8))
        do {
            try connection.flush()
        } catch {
            failed(request, on: connection, error)
        }
    }

    private func dispatchIdleConnections() {
        for connection in connections where !queue.isEmpty {
            if case .idle = connection.state { offer(connection) }
        }
    }

    /// Opens connections while more requests wait than connections are being opened, up to the
    /// maximum; at the maximum, an idle connection makes room for one a retry waits for.
    private func openConnections(now: ContinuousClock.Instant) {
        var connecting = connections.count { if case .connecting = $0.state { true } else { false } }
        guard waitingCount > connecting else { return }
        var addresses: [RedisSocketAddress]?
        while waitingCount > connecting {
            if connections.count >= settings.maximumConnections {
                guard !retries.isEmpty,
                    let idle = connections.first(where: { if case .idle = $0.state { true } else { false } })
                else { return }
                remove(idle)
            }
            if addresses == nil { addresses = currentAddresses(now: now) }
            guard let addresses, open(addressIndex: 0, of: addresses, now: now) else { return }
            connecting += 1
        }
    }

    /// Opens one connection to the address at `index` or a later one.
    ///
    /// - Returns: Whether one is open or opening; when none could be, the oldest waiting request
    ///   fails with the reason.
    private func open(addressIndex index: Int, of addresses: [RedisSocketAddress], now: ContinuousClock.Instant) -> Bool
    {
        var failure = RedisFailure("cannot connect: no address")
        for addressIndex in index..<addresses.count {
            do {
                let connection = try RedisConnection(
                    address: addresses[addressIndex],
                    addressIndex: addressIndex,
                    deadline: now + settings.connectTimeout,
                    maximumReplyBytes: settings.maximumReplyBytes
                )
                connections.append(connection)
                statisticsBox.withLock { $0.connectionsOpened += 1 }
                if case .idle = connection.state { offer(connection) }
                return true
            } catch {
                failure = error
            }
        }
        addressesResolvedAt = nil
        if let request = nextWaiting() { finish(request, .failure(failure)) }
        return false
    }

    private func connectFailed(_ connection: RedisConnection, _ failure: RedisFailure) {
        remove(connection)
        guard case .connecting(let index, _) = connection.state else { return }
        if index + 1 < addresses.count {
            _ = open(addressIndex: index + 1, of: addresses, now: .now)
        } else {
            addressesResolvedAt = nil
            if let request = nextWaiting() { finish(request, .failure(failure)) }
        }
    }

    private func discard(_ connection: RedisConnection) {
        remove(connection)
        statisticsBox.withLock { $0.connectionsDiscarded += 1 }
    }

    private func remove(_ connection: RedisConnection) {
        connections.removeAll { $0 === connection }
    }

    private func dropCancelled(_ request: RedisRequest) {
        switch request.stage {
        case .waiting:
            waitingCount -= 1
            request.stage = .done
        case .running:
            request.stage = .done
            for connection in connections {
                if case .busy(let running) = connection.state, running === request { discard(connection) }
            }
        case .submitted, .done:
            request.stage = .done
        }
    }

    // MARK: Time

    /// Fails what is past its deadline, and closes connections idle too long.
    private func expire(now: ContinuousClock.Instant) {
        expireWaiting(in: &queue, now: now)
        expireWaiting(in: &retries, now: now)
        for connection in connections {
            switch connection.state {
            case .busy(let request) where request.deadline <= now:
                discard(connection)
                request.stage = .done
                request.finish(.failure(Self.timeout("waiting for a reply")))
            case .connecting(_, let deadline) where deadline <= now:
                discard(connection)
            case .idle(let since) where since + settings.idleLifetime <= now:
                remove(connection)
            default:
                break
            }
        }
    }

    /// Fails the requests at the front of `waiting` whose deadline passed.
    ///
    /// Those no longer waiting are dropped on the way. One look at the front is enough: requests
    /// queue in the order of their deadlines (every call has the same timeout).
    private func expireWaiting(in waiting: inout RedisRequestQueue, now: ContinuousClock.Instant) {
        while let request = waiting.first, request.stage != .waiting || request.isFinished || request.deadline <= now {
            _ = waiting.popFirst()
            guard request.stage == .waiting else { continue }
            finish(request, .failure(request.isFinished ? .cancelled : Self.timeout("waiting for a connection")))
        }
    }

    private static func timeout(_ what: String) -> RedisFailure {
        RedisFailure("timed out \(what)", kind: .timeout)
    }

    /// Milliseconds until the next deadline, rounded up; -1 when nothing has one.
    private func pollTimeout(now: ContinuousClock.Instant) -> Int32 {
        var next: ContinuousClock.Instant?
        func consider(_ instant: ContinuousClock.Instant) { next = min(next ?? instant, instant) }
        if let request = queue.first { consider(request.deadline) }
        if let request = retries.first { consider(request.deadline) }
        for connection in connections {
            switch connection.state {
            case .busy(let request): consider(request.deadline)
            case .connecting(_, let deadline): consider(deadline)
            case .idle(let since): consider(since + settings.idleLifetime)
            }
        }
        guard let next else { return -1 }
        let (seconds, attoseconds) = now.duration(to: next).components
        guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return 0 }
        // A deadline beyond what poll takes (a timeout of years) waits the longest poll does, and
        // never multiplies its seconds into an overflow.
        guard seconds < Int64(Int32.max) / 1000 else { return Int32.max }
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }

    // MARK: Addresses

    /// The server's addresses, or `nil` while they are being resolved.
    ///
    /// An address is used as it is; a host name is resolved on a thread of its own (the system
    /// resolver blocks) and kept for 30 seconds, or until connecting to it fails.
    private func currentAddresses(now: ContinuousClock.Instant) -> [RedisSocketAddress]? {
        if let resolvedAt = addressesResolvedAt, now < resolvedAt + .seconds(30), !addresses.isEmpty {
            return addresses
        }
        if case .success(let numeric) = RedisSockets.resolve(
            host: settings.host,
            port: settings.port,
            numericOnly: true
        ) {
            addresses = numeric
            addressesResolvedAt = now + .seconds(1_000_000_000)
            return addresses
        }
        guard !isResolving else { return nil }
        isResolving = true
        let (host, port) = (settings.host, settings.port)
        let started = RedisSockets.startThread {
            let result = RedisSockets.resolve(host: host, port: port, numericOnly: false)
            self.inbox.withLock { box in
                box.resolution = result
                if box.hasStarted, !box.hasExited { RedisSockets.wake(box.wakeDescriptor) }
            }
        }
        if !started {
            isResolving = false
            resolved(.failure(RedisFailure("cannot start a thread to resolve the host name")))
        }
        return nil
    }

    private func resolved(_ result: Result<[RedisSocketAddress], RedisFailure>) {
        isResolving = false
        switch result {
        case .success(let found):
            addresses = found
            addressesResolvedAt = .now
        case .failure(let failure):
            // Every waiting call needed the name: none can connect.
            while let request = nextWaiting() { finish(request, .failure(failure)) }
        }
    }

    // MARK: Closing

    private func shutDown(failing requests: [RedisRequest]) {
        inbox.withLock { box in
            box.hasExited = true
            RedisSockets.closeDescriptor(box.wakeDescriptor)
            box.wakeDescriptor = -1
        }
        RedisSockets.closeDescriptor(wakeReadDescriptor)
        for request in requests { request.finish(.failure(.closed)) }
        while let request = queue.popFirst() { request.finish(.failure(.closed)) }
        while let request = retries.popFirst() { request.finish(.failure(.closed)) }
        for connection in connections {
            if case .busy(let request) = connection.state { request.finish(.failure(.closed)) }
        }
        connections = []
        waitingCount = 0
        updateStatistics()
    }

    private func updateStatistics() {
        var running = 0
        var idle = 0
        for connection in connections {
            switch connection.state {
            case .busy: running += 1
            case .idle: idle += 1
            case .connecting: break
            }
        }
        statisticsBox.withLock { statistics in
            statistics.peakRunning = max(statistics.peakRunning, running)
            statistics.idle = idle
            statistics.waiting = waitingCount
        }
    }
}

/// Requests waiting for a connection, oldest first.
struct RedisRequestQueue {
    private var storage: [RedisRequest] = []
    private var head = 0

    var first: RedisRequest? { head < storage.count ? storage[head] : nil }

    var isEmpty: Bool { head == storage.count }

    mutating func pushLast(_ request: RedisRequest) {
        storage.append(request)
    }

    mutating func popFirst() -> RedisRequest? {
        guard head < storage.count else { return nil }
        let request = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return request
    }
}
