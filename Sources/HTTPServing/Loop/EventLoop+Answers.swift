#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing answers, closing connections, and the loop's lists and timeouts.
extension EventLoop {
    // MARK: Writing

    /// Writes an answer: its head and body (none for `HEAD`) in one `writev`, the rest when the
    /// socket takes it.
    func answer(_ slot: Int32, _ response: HTTPResponse) {
        let index = Int(slot)
        let keepAlive = connections[index].keepAlive && !core.isStopping
        connections[index].keepAlive = keepAlive
        var head: [UInt8] = []
        swap(&head, &connections[index].outHead)
        head.removeAll(keepingCapacity: true)
        Self.serialize(
            response,
            keepAlive: keepAlive,
            http10: connections[index].request?.isHTTP10 ?? false,
            common: core.commonHeaderBytes,
            into: &head
        )
        connections[index].outHead = head
        // An answer to HEAD is its head alone, `Content-Length` the one GET would have (RFC 9110,
        // section 9.3.2): bytes after it would be read as the start of the next answer.
        connections[index].outBody = connections[index].request?.method == "HEAD" ? [] : response.body
        connections[index].sent = 0
        connections[index].status = response.status.code
        writeAnswer(slot)
    }

    /// The status line and header fields, ending with the blank line.
    static func serialize(
        _ response: HTTPResponse,
        keepAlive: Bool,
        http10: Bool,
        common: [UInt8],
        into head: inout [UInt8]
    ) {
        head.append(contentsOf: "HTTP/1.1 ".utf8)
        appendDecimal(response.status.code, to: &head)
        head.append(32)
        head.append(contentsOf: response.status.reason.utf8)
        head.append(contentsOf: "\r\nContent-Type: ".utf8)
        head.append(contentsOf: response.contentType.utf8)
        head.append(contentsOf: "\r\nContent-Length: ".utf8)
        appendDecimal(response.body.count, to: &head)
        head.append(contentsOf: "\r\n".utf8)
        head.append(contentsOf: common)
        for (name, value) in response.headerFields {
            head.append(contentsOf: name.utf8)
            head.append(contentsOf: ": ".utf8)
            head.append(contentsOf: value.utf8)
            head.append(contentsOf: "\r\n".utf8)
        }
        if !keepAlive {
            head.append(contentsOf: "Connection: close\r\n".utf8)
        } else if http10 {
            head.append(contentsOf: "Connection: keep-alive\r\n".utf8)
        }
        head.append(contentsOf: "\r\n".utf8)
    }

    static func appendDecimal(_ value: Int, to bytes: inout [UInt8]) {
        guard value > 0 else {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        var digits:
            (
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8
            ) = (
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                0, 0
            )
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { buffer in
            while rest > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            }
            for position in stride(from: count - 1, through: 0, by: -1) { bytes.append(buffer[position]) }
        }
    }

    /// Sends what is left of the answer; finishes the exchange once it is all sent.
    func writeAnswer(_ slot: Int32) {
        let index = Int(slot)
        let head = connections[index].outHead
        let body = connections[index].outBody
        let total = head.count + body.count
        while true {
            let sent = connections[index].sent
            let count = head.withUnsafeBytes { headBytes in
                body.withUnsafeBytes { bodyBytes in
                    guard let headStart = headBytes.baseAddress else { return -1 }
                    var parts: [iovec] = []
                    parts.reserveCapacity(2)
                    if sent < headBytes.count {
                        parts.append(
                            iovec(
                                iov_base: UnsafeMutableRawPointer(mutating: headStart + sent),
                                iov_len: headBytes.count - sent
                            )
                        )
                    }
                    let bodySent = max(0, sent - headBytes.count)
                    if bodySent < bodyBytes.count, let bodyStart = bodyBytes.baseAddress {
                        parts.append(
                            iovec(
                                iov_base: UnsafeMutableRawPointer(mutating: bodyStart + bodySent),
                                iov_len: bodyBytes.count - bodySent
                            )
                        )
                    }
                    return writev(connections[index].descriptor, parts, Int32(parts.count))
                }
            }
            if count > 0 {
                connections[index].sent += count
                if connections[index].sent == total {
                    finishAnswer(slot)
                    return
                }
            } else if count < 0, errno == EINTR {
                continue
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                if connections[index].state != .writing {
                    move(slot, to: .writing)
                    poller.setInterest(connections[index].descriptor, read: false, write: true)
                }
                return
            } else {
                // The client is gone: nobody to answer.
                closeNow(slot)
                return
            }
        }
    }

    /// The answer is written: the connection waits for the next request, or closes.
    private func finishAnswer(_ slot: Int32) {
        let index = Int(slot)
        releaseExchange(slot)
        connections[index].answeredAny = true
        connections[index].outBody = []
        if connections[index].outHead.capacity > 64 << 10 { connections[index].outHead = [] }
        guard connections[index].keepAlive else {
            beginClosing(slot)
            return
        }
        move(slot, to: .waiting)
        connections[index].receivedAny = !connections[index].input.isEmpty
        poller.setInterest(connections[index].descriptor, read: true, write: false)
        if connections[index].receivedAny || connections[index].maybeReadable {
            readyLater(slot)
        }
    }

    /// Gives back the exchange's places and bytes, and reports it.
    func releaseExchange(_ slot: Int32) {
        let index = Int(slot)
        if connections[index].holdsRequestPlace {
            core.counts.requests.subtract(1, ordering: .relaxed)
            connections[index].holdsRequestPlace = false
        }
        if connections[index].bodyBytesReserved > 0 {
            core.counts.bodyBytes.subtract(connections[index].bodyBytesReserved, ordering: .relaxed)
            connections[index].bodyBytesReserved = 0
        }
        if let answered = core.handler.answered, connections[index].status != 0 {
            let request = connections[index].request
            answered(
                HTTPExchange(
                    method: request?.method,
                    path: request?.path,
                    status: connections[index].status,
                    duration: now - connections[index].started
                )
            )
        }
        connections[index].status = 0
        connections[index].request = nil
        connections[index].bodyLength = 0
    }

    private func readyLater(_ slot: Int32) {
        readyQueue.append((slot, connections[Int(slot)].generation))
    }

    /// Reads the requests of connections put aside by `readyLater`.
    func lookAtReady() {
        while !readyQueue.isEmpty {
            let taken = readyQueue
            readyQueue.removeAll(keepingCapacity: true)
            for (slot, generation) in taken {
                let index = Int(slot)
                guard connections[index].generation == generation, connections[index].state == .waiting else {
                    continue
                }
                readHead(slot)
            }
        }
    }

    // MARK: Closing

    /// Sends FIN after the answer and reads (and drops) what the client still sends, until it
    /// closes, a mebibyte has come, or the drain timeout passes.
    func beginClosing(_ slot: Int32) {
        let index = Int(slot)
        shutdown(connections[index].descriptor, Int32(SHUT_WR))
        move(slot, to: .closing)
        connections[index].input = []
        connections[index].drained = 0
        poller.setInterest(connections[index].descriptor, read: true, write: false)
        // Over this loop's share, the connection draining longest goes first: everything it sent
        // so far has been read, so it still gets a FIN, not a reset.
        while lists[State.closing].count > maximumClosing {
            let oldest = lists[State.closing].first
            connections[Int(oldest)].maybeReadable = true
            drain(oldest)
            if connections[Int(oldest)].state == .closing { closeNow(oldest) }
        }
        if connections[index].state == .closing { drain(slot) }
    }

    func drain(_ slot: Int32) {
        let index = Int(slot)
        while connections[index].maybeReadable, connections[index].drained < 1 << 20 {
            let count = Sockets.receive(connections[index].descriptor, into: scratch)
            if count > 0 {
                connections[index].drained += count
            } else if count < 0, errno == EINTR {
                continue
            } else if count < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                connections[index].maybeReadable = false
                return
            } else {
                closeNow(slot)
                return
            }
        }
        if connections[index].drained >= 1 << 20 { closeNow(slot) }
    }

    /// Closes the connection and frees its slot.
    func closeNow(_ slot: Int32) {
        let index = Int(slot)
        guard connections[index].state != .free || connections[index].descriptor >= 0 else { return }
        if connections[index].holdsRequestPlace || connections[index].bodyBytesReserved > 0 {
            releaseExchange(slot)
        }
        if poller.kind == .poll { poller.remove(connections[index].descriptor) }
        close(connections[index].descriptor)
        unlink(slot)
        let generation = connections[index].generation &+ 1
        connections[index] = Connection()
        connections[index].generation = generation
        freeSlots.append(slot)
    }

    // MARK: Lists

    /// Moves a connection to a state: out of its list, to the end of the new state's, its
    /// timeout counted from now (or still from when it began waiting, for a body).
    func move(_ slot: Int32, to state: Connection.State, keepingSince: Bool = false) {
        let index = Int(slot)
        unlink(slot)
        connections[index].state = state
        if !keepingSince { connections[index].since = now }
        let list = State.index(state)
        connections[index].previous = lists[list].last
        connections[index].next = -1
        if lists[list].last >= 0 {
            connections[Int(lists[list].last)].next = slot
        } else {
            lists[list].first = slot
        }
        lists[list].last = slot
        lists[list].count += 1
    }

    private func unlink(_ slot: Int32) {
        let index = Int(slot)
        let list = State.index(connections[index].state)
        guard list != 0 else { return }
        let previous = connections[index].previous
        let next = connections[index].next
        if previous >= 0 { connections[Int(previous)].next = next } else { lists[list].first = next }
        if next >= 0 { connections[Int(next)].previous = previous } else { lists[list].last = previous }
        lists[list].count -= 1
        connections[index].previous = -1
        connections[index].next = -1
        connections[index].state = .free
    }

    // MARK: Timeouts

    /// Ends what has run out of time: heads and bodies (408, or a close for a connection idle
    /// between requests), handlers (504), answers nobody reads, drains.
    func sweep() {
        let limits = core.limits
        while case let slot = lists[State.waiting].first, slot >= 0,
            now - connections[Int(slot)].since >= limits.readTimeout
        {
            let connection = connections[Int(slot)]
            if connection.answeredAny, !connection.receivedAny {
                beginClosing(slot)
            } else {
                refuse(slot, .requestTimeout)
            }
        }
        var slot = lists[State.receiving].first
        while slot >= 0 {
            let next = connections[Int(slot)].next
            if now - connections[Int(slot)].since >= limits.readTimeout { refuse(slot, .requestTimeout) }
            slot = next
        }
        if let handlerTimeout = limits.handlerTimeout {
            while case let slot = lists[State.handling].first, slot >= 0,
                now - connections[Int(slot)].since >= handlerTimeout
            {
                // The late answer is dropped: it belongs to an exchange that is over.
                connections[Int(slot)].exchange &+= 1
                refuse(slot, .handlerTimeout)
            }
        }
        while case let slot = lists[State.writing].first, slot >= 0,
            now - connections[Int(slot)].since >= limits.readTimeout
        {
            closeNow(slot)
        }
        while case let slot = lists[State.closing].first, slot >= 0,
            now - connections[Int(slot)].since >= limits.drainTimeout
        {
            closeNow(slot)
        }
        if let again = acceptingAgainAt, now >= again {
            acceptingAgainAt = nil
            if !core.isStopping {
                poller.addReader(core.listener, token: Self.listenerToken, exclusive: false)
                listening = true
            }
        }
    }

    /// The soonest instant a timeout falls due, `nil` for none.
    func nextDeadline() -> ContinuousClock.Instant? {
        let limits = core.limits
        var soonest: ContinuousClock.Instant?
        func consider(_ instant: ContinuousClock.Instant) {
            if soonest.map({ instant < $0 }) ?? true { soonest = instant }
        }
        func first(_ list: Int, _ timeout: Duration) {
            let slot = lists[list].first
            if slot >= 0 { consider(connections[Int(slot)].since + timeout) }
        }
        first(State.waiting, limits.readTimeout)
        var slot = lists[State.receiving].first
        while slot >= 0 {
            consider(connections[Int(slot)].since + limits.readTimeout)
            slot = connections[Int(slot)].next
        }
        if let handlerTimeout = limits.handlerTimeout { first(State.handling, handlerTimeout) }
        first(State.writing, limits.readTimeout)
        first(State.closing, limits.drainTimeout)
        if let again = acceptingAgainAt { consider(again) }
        if core.isStopping { consider(core.stopDeadline) }
        return soonest
    }

    /// A poll timeout in milliseconds until `instant`, rounded up (-1 for none).
    func milliseconds(until instant: ContinuousClock.Instant?) -> Int32 {
        guard let instant else { return -1 }
        let (seconds, attoseconds) = (instant - .now).components
        guard seconds < 3600 else { return 3_600_000 }
        return Int32(max(0, seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000))
    }
}
