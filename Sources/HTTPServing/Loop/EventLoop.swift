import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One thread's share of the connections: it reads their requests, answers them (or hands them to
/// the handler's work and takes the answers back), writes the answers, and keeps every state's
/// timeout, all without blocking.
///
/// Each connection belongs to one loop for its whole life, so its state is touched by that loop's
/// thread alone; other threads reach a loop only through its message queue and wake pipe. Loop 0
/// also accepts, and deals the new connections to the loops in turn.
final class EventLoop: @unchecked Sendable {
    let index: Int
    let core: ServerCore
    let poller: Poller
    private let wakeReader: Int32
    private let wakeWriter: Int32
    private let wakePending = Atomic<Bool>(false)
    private let messages = Mutex(Messages())

    /// The loop's inbox, closed once the loop is done.
    private struct Messages {
        var list: [LoopMessage] = []
        var closed = false
    }

    var connections: [Connection] = []
    var freeSlots: [Int32] = []
    /// One list per state (``Connection/State``), oldest first.
    var lists = [ConnectionList](repeating: ConnectionList(), count: 6)
    /// Connections with bytes already read (the client's next request) or maybe waiting in the
    /// socket once their answer is written: looked at after the current events, not from inside
    /// the answer (a client pipelining many requests would otherwise nest one answer in another).
    var readyQueue: [(slot: Int32, generation: UInt32)] = []
    /// This loop's share of the waiting and closing connections.
    let maximumWaiting: Int
    let maximumClosing: Int
    var now = ContinuousClock.now
    /// Receives land here first.
    let scratch: UnsafeMutableRawBufferPointer
    /// The same bytes, typed.
    let scratchBytes: UnsafeMutablePointer<UInt8>
    var acceptingAgainAt: ContinuousClock.Instant?
    var listening = false
    var stopNoticed = false
    /// The loop that gets the next connection this one accepts.
    private var nextLoop = 0

    static let listenerToken = UInt64.max
    static let wakeToken = UInt64.max - 1

    init(index: Int, core: ServerCore) throws(Sockets.Failure) {
        self.index = index
        self.core = core
        do {
            poller = try Poller(kind: core.usesPoll ? .poll : .automatic)
        } catch {
            throw Sockets.Failure(message: error.message)
        }
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw Sockets.Failure(message: "pipe: \(Sockets.lastError())") }
        wakeReader = ends[0]
        wakeWriter = ends[1]
        Sockets.setNonBlocking(wakeReader)
        Sockets.setNonBlocking(wakeWriter)
        _ = fcntl(wakeReader, F_SETFD, FD_CLOEXEC)
        _ = fcntl(wakeWriter, F_SETFD, FD_CLOEXEC)
        let loops = core.loopCount
        maximumWaiting = Self.share(of: core.limits.maximumWaiting, loop: index, of: loops)
        maximumClosing = Self.share(of: core.limits.maximumClosing, loop: index, of: loops)
        scratchBytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 64 << 10)
        scratch = UnsafeMutableRawBufferPointer(start: scratchBytes, count: 64 << 10)
        poller.addReader(wakeReader, token: Self.wakeToken)
        if index == 0 {
            poller.addReader(core.listener, token: Self.listenerToken)
            listening = true
        }
    }

    deinit {
        scratchBytes.deallocate()
        close(wakeReader)
        close(wakeWriter)
    }

    /// Loop `loop`'s part of a limit shared by `loops` (at least one).
    static func share(of limit: Int, loop: Int, of loops: Int) -> Int {
        max(1, limit / loops + (loop < limit % loops ? 1 : 0))
    }

    // MARK: Running

    /// Serves until the server stops and this loop's connections are done (or the stop's deadline
    /// passes).
    func run() {
        while true {
            let timeout = milliseconds(until: nextDeadline())
            var fresh = false
            poller.wait(milliseconds: timeout) { event in
                if !fresh {
                    now = .now
                    fresh = true
                }
                handle(event)
            }
            now = .now
            if core.isStopping, !stopNoticed { noticeStop() }
            lookAtReady()
            sweep()
            if stopNoticed, isDone || now >= core.stopDeadline {
                // A connection dealt to this loop as it finished is refused, then the loop goes on
                // until that answer is written.
                if takeLastConnections() { continue }
                closeEverything()
                return
            }
        }
    }

    /// Hands this loop a message from any thread, waking it when it may be waiting; `false` when
    /// the loop is done and takes no more (an answer then has no connection left to go to).
    @discardableResult
    func post(_ message: LoopMessage) -> Bool {
        let taken = messages.withLock { inbox in
            guard !inbox.closed else { return false }
            inbox.list.append(message)
            return true
        }
        if taken { wake() }
        return taken
    }

    /// Wakes the loop (at most one byte in the pipe at a time).
    func wake() {
        guard !wakePending.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var byte: UInt8 = 1
        _ = write(wakeWriter, &byte, 1)
    }

    private func handle(_ event: Poller.Event) {
        switch event.token {
        case Self.listenerToken:
            acceptConnections()
        case Self.wakeToken:
            takeMessages()
        default:
            let slot = Int32(truncatingIfNeeded: event.token & 0xFFFF_FFFF)
            let index = Int(slot)
            guard index < connections.count, connections[index].generation == UInt32(event.token >> 32) else { return }
            if event.readable { connections[index].maybeReadable = true }
            switch connections[index].state {
            case .waiting: readHead(slot)
            case .receiving: readBody(slot)
            case .writing: if event.writable { writeAnswer(slot) }
            case .closing: if event.readable { drain(slot) }
            case .handling, .free: break
            }
        }
    }

    private func takeMessages() {
        var sink = [UInt8](repeating: 0, count: 64)
        while sink.withUnsafeMutableBytes({ read(wakeReader, $0.baseAddress, $0.count) }) > 0 {}
        wakePending.store(false, ordering: .sequentiallyConsistent)
        let taken = messages.withLock { inbox in
            let taken = inbox.list
            inbox.list.removeAll(keepingCapacity: true)
            return taken
        }
        for message in taken {
            switch message {
            case .answer(let slot, let generation, let exchange, let response):
                let index = Int(slot)
                guard index < connections.count, connections[index].generation == generation,
                    connections[index].exchange == exchange, connections[index].state == .handling
                else { continue }
                answer(slot, response)
            case .connection(let descriptor):
                admit(descriptor)
            }
        }
    }

    // MARK: Accepting

    private func acceptConnections() {
        // At most 64 at a time, so heads are read in between.
        for _ in 0..<64 {
            switch Sockets.accept(core.listener) {
            case .success(let descriptor):
                let target = nextLoop
                nextLoop = (nextLoop + 1) % core.loops.count
                // A loop done with its stop takes none: this one refuses it instead.
                if target == index || !core.loops[target].post(.connection(descriptor)) {
                    admit(descriptor)
                }
            case .failure(let error):
                if error.wouldBlock { return }
                if error.code == EINTR || error.code == ECONNABORTED { continue }
                // Out of descriptors above all: let connections finish instead of spinning.
                acceptingAgainAt = now + .milliseconds(10)
                poller.remove(core.listener)
                listening = false
                return
            }
        }
    }

    /// Takes a new connection: a place among the waiting, made by evicting the one waiting
    /// longest when they are all taken and it has waited long enough; refused otherwise.
    private func admit(_ descriptor: Int32) {
        let slot = takeSlot(descriptor)
        if core.isStopping {
            refuse(slot, .tooManyConnections)
            return
        }
        if lists[State.waiting].count >= maximumWaiting {
            let oldest = lists[State.waiting].first
            guard let evictable = core.limits.evictableAfter, oldest >= 0,
                now - connections[Int(oldest)].since >= evictable
            else {
                refuse(slot, .tooManyConnections)
                return
            }
            evict(oldest)
        }
        move(slot, to: .waiting)
    }

    /// Makes room: a connection idle between requests is closed; one owing its head is answered 408.
    private func evict(_ slot: Int32) {
        let connection = connections[Int(slot)]
        if connection.answeredAny, !connection.receivedAny {
            beginClosing(slot)
        } else {
            refuse(slot, .requestTimeout)
        }
    }

    private func takeSlot(_ descriptor: Int32) -> Int32 {
        let slot: Int32
        if let free = freeSlots.popLast() {
            slot = free
        } else {
            slot = Int32(connections.count)
            connections.append(Connection())
        }
        let index = Int(slot)
        connections[index].descriptor = descriptor
        connections[index].since = now
        connections[index].started = now
        poller.addConnection(descriptor, token: token(slot))
        return slot
    }

    func token(_ slot: Int32) -> UInt64 {
        UInt64(connections[Int(slot)].generation) << 32 | UInt64(UInt32(bitPattern: slot))
    }

    // MARK: Reading

    /// Reads what has come of a head, and goes on with the request once it is whole.
    func readHead(_ slot: Int32) {
        let index = Int(slot)
        if !connections[index].input.isEmpty, examineInput(slot) { return }
        let limit = core.limits.maximumHeadBytes
        while connections[index].state == .waiting, connections[index].maybeReadable {
            let count = Sockets.receive(connections[index].descriptor, into: scratch)
            if count > 0 {
                connections[index].receivedAny = true
                if count < scratch.count { connections[index].maybeReadable = false }
                if connections[index].input.isEmpty {
                    // The usual case: a whole head in one read, parsed where it landed.
                    let bytes = UnsafeBufferPointer(start: scratchBytes, count: count)
                    switch HTTPRequest.boundary(in: bytes, from: 0) {
                    case .end(let end)?:
                        guard end <= limit else {
                            refuse(slot, .headTooLarge)
                            return
                        }
                        if end + 4 < count { connections[index].input.append(contentsOf: bytes[(end + 4)...]) }
                        headArrived(slot, Self.parse(UnsafeBufferPointer(rebasing: bytes[..<end]), core))
                        return
                    case .broken?:
                        refuse(slot, .bareLineBreak)
                        return
                    case nil:
                        connections[index].input.append(contentsOf: bytes)
                        connections[index].scanned = HTTPRequest.resumePoint(after: count)
                        if count >= limit + 4 {
                            refuse(slot, .headTooLarge)
                            return
                        }
                    }
                } else {
                    connections[index].input.append(
                        contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<count])
                    )
                    if examineInput(slot) { return }
                }
            } else if count == 0 {
                // The client closed: with nothing owed to it, the connection just ends.
                closeNow(slot)
                return
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                connections[index].maybeReadable = false
                return
            } else if errno != EINTR {
                closeNow(slot)
                return
            }
        }
    }

    /// Looks for the head's end in the bytes read so far; true once the connection has left
    /// waiting (its head is whole or refused).
    private func examineInput(_ slot: Int32) -> Bool {
        let index = Int(slot)
        let from = connections[index].scanned
        let boundary = connections[index].input.withUnsafeBufferPointer { HTTPRequest.boundary(in: $0, from: from) }
        let limit = core.limits.maximumHeadBytes
        switch boundary {
        case .end(let end)?:
            guard end <= limit else {
                refuse(slot, .headTooLarge)
                return true
            }
            let parsed = connections[index].input.withUnsafeBufferPointer {
                Self.parse(UnsafeBufferPointer(rebasing: $0[..<end]), core)
            }
            connections[index].input.removeSubrange(0..<(end + 4))
            connections[index].scanned = 0
            headArrived(slot, parsed)
            return true
        case .broken?:
            refuse(slot, .bareLineBreak)
            return true
        case nil:
            let count = connections[index].input.count
            connections[index].scanned = HTTPRequest.resumePoint(after: count)
            if count >= limit + 4 {
                refuse(slot, .headTooLarge)
                return true
            }
            return false
        }
    }

    private static func parse(
        _ head: UnsafeBufferPointer<UInt8>,
        _ core: ServerCore
    ) -> Result<HTTPRequest.Parsed, HTTPRefusal> {
        do {
            return .success(try HTTPRequest.parse(head, maximumBodyBytes: core.limits.maximumBodyBytes))
        } catch {
            return .failure(error)
        }
    }

    /// A whole head: refused, or given a place among the requests answered and then its body, or
    /// answered.
    private func headArrived(_ slot: Int32, _ result: Result<HTTPRequest.Parsed, HTTPRefusal>) {
        let index = Int(slot)
        connections[index].started = now
        let parsed: HTTPRequest.Parsed
        switch result {
        case .failure(let refusal):
            refuse(slot, refusal)
            return
        case .success(let value):
            parsed = value
        }
        connections[index].request = parsed.request
        let limits = core.limits
        guard SharedCounts.take(core.counts.requests, 1, upTo: limits.maximumRequests) else {
            refuse(slot, .tooManyRequests)
            return
        }
        connections[index].holdsRequestPlace = true
        connections[index].keepAlive = parsed.keepAlive && limits.keepAlive
        guard parsed.bodyLength > 0 else {
            dispatch(slot)
            return
        }
        guard SharedCounts.take(core.counts.bodyBytes, parsed.bodyLength, upTo: limits.maximumBodyBytesInFlight) else {
            refuse(slot, .bodyBytesInFlight)
            return
        }
        connections[index].bodyBytesReserved = parsed.bodyLength
        connections[index].bodyLength = parsed.bodyLength
        connections[index].request?.body.reserveCapacity(parsed.bodyLength)
        // The whole request within the read timeout: the body's time counts from the head's.
        move(slot, to: .receiving, keepingSince: true)
        poller.setInterest(connections[index].descriptor, read: true, write: false)
        var input: [UInt8] = []
        swap(&input, &connections[index].input)
        let whole = takeBody(slot, from: &input)
        connections[index].input = input
        if whole {
            dispatch(slot)
        } else {
            readBody(slot)
        }
    }

    /// Moves what `bytes` hold of the body into the request (the rest stays: the next request's);
    /// whether the body is whole.
    private func takeBody(_ slot: Int32, from bytes: inout [UInt8]) -> Bool {
        let index = Int(slot)
        let wanted = connections[index].bodyLength - (connections[index].request?.body.count ?? 0)
        let taken = min(wanted, bytes.count)
        if taken > 0 {
            connections[index].request?.body.append(contentsOf: bytes[..<taken])
            bytes.removeSubrange(..<taken)
        }
        return taken == wanted
    }

    func readBody(_ slot: Int32) {
        let index = Int(slot)
        while connections[index].state == .receiving, connections[index].maybeReadable {
            let count = Sockets.receive(connections[index].descriptor, into: scratch)
            if count > 0 {
                if count < scratch.count { connections[index].maybeReadable = false }
                var bytes = [UInt8](UnsafeRawBufferPointer(rebasing: scratch[..<count]))
                let whole = takeBody(slot, from: &bytes)
                connections[index].input.append(contentsOf: bytes)
                if whole {
                    dispatch(slot)
                    return
                }
            } else if count == 0 {
                closeNow(slot)
                return
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                connections[index].maybeReadable = false
                return
            } else if errno != EINTR {
                closeNow(slot)
                return
            }
        }
    }

    // MARK: Handling

    /// Answers at once when the handler can, or hands the request to its work.
    private func dispatch(_ slot: Int32) {
        let index = Int(slot)
        guard let request = connections[index].request else { return }
        let handler = core.handler
        if let atOnce = handler.atOnce, let response = atOnce(request) {
            answer(slot, response)
            return
        }
        move(slot, to: .handling)
        poller.setInterest(connections[index].descriptor, read: false, write: false)
        connections[index].exchange &+= 1
        let generation = connections[index].generation
        let exchange = connections[index].exchange
        switch handler.work {
        case .task(let work):
            Task { [self] in
                let response = await work(request)
                post(.answer(slot: slot, generation: generation, exchange: exchange, response))
            }
        case .thread(let stackSize, let work):
            Sockets.spawnThread(stackSize: stackSize) { [self] in
                post(.answer(slot: slot, generation: generation, exchange: exchange, work(request)))
            }
        }
    }

    /// Refuses for a reason of the server's own, with the limit the request went past.
    func refuse(_ slot: Int32, _ kind: HTTPRefusal.Kind) {
        let limits = core.limits
        let limit =
            switch kind {
            case .tooManyConnections: limits.maximumWaiting
            case .tooManyRequests: limits.maximumRequests
            case .bodyBytesInFlight: limits.maximumBodyBytesInFlight
            case .requestTimeout: Int(limits.readTimeout.components.seconds)
            case .headTooLarge: limits.maximumHeadBytes
            case .bodyTooLarge: limits.maximumBodyBytes
            case .handlerTimeout: Int(limits.handlerTimeout?.components.seconds ?? 0)
            default: 0
            }
        refuse(slot, HTTPRefusal(kind: kind, limit: limit))
    }

    /// Answers with the handler's words for a refusal, and closes the connection after it.
    func refuse(_ slot: Int32, _ refusal: HTTPRefusal) {
        connections[Int(slot)].keepAlive = false
        answer(slot, core.handler.refuse(refusal))
    }

    // MARK: Stopping

    /// Stops accepting, and closes the connections idle between requests; the others finish.
    private func noticeStop() {
        stopNoticed = true
        if listening {
            poller.remove(core.listener)
            listening = false
        }
        acceptingAgainAt = nil
        if index == 0 { closeListener() }
        var slot = lists[State.waiting].first
        while slot >= 0 {
            let next = connections[Int(slot)].next
            let connection = connections[Int(slot)]
            if connection.input.isEmpty, !connection.receivedAny {
                if connection.maybeReadable { readHead(slot) }
                if connections[Int(slot)].state == .waiting, !connections[Int(slot)].receivedAny {
                    beginClosing(slot)
                }
            }
            slot = next
        }
    }

    /// Refuses the connections the system took and nobody accepted yet (closing the listener would
    /// reset them), then closes it: from then on a new connection is refused by the system at once,
    /// not queued to wait for the grace period and be reset at its end.
    private func closeListener() {
        while true {
            switch Sockets.accept(core.listener) {
            case .success(let descriptor):
                admit(descriptor)
            case .failure(let error):
                if error.code == EINTR || error.code == ECONNABORTED { continue }
                core.closeListener()
                return
            }
        }
    }

    /// Closes the inbox and refuses the connections still in it; whether there were any.
    private func takeLastConnections() -> Bool {
        let taken = messages.withLock { inbox in
            inbox.closed = true
            let taken = inbox.list
            inbox.list.removeAll()
            return taken
        }
        var refused = false
        for case .connection(let descriptor) in taken {
            admit(descriptor)
            refused = true
        }
        return refused
    }

    private var isDone: Bool {
        lists.allSatisfy { $0.count == 0 }
    }

    private func closeEverything() {
        for index in connections.indices where connections[index].state != .free {
            closeNow(Int32(index))
        }
    }
}

/// The states as indices of the loop's lists.
enum State {
    static let waiting = 1
    static let receiving = 2
    static let handling = 3
    static let writing = 4
    static let closing = 5

    static func index(_ state: Connection.State) -> Int {
        switch state {
        case .free: 0
        case .waiting: waiting
        case .receiving: receiving
        case .handling: handling
        case .writing: writing
        case .closing: closing
        }
    }
}
