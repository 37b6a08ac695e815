#if canImport(Glibc)
import CEpoll
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Readiness of many descriptors at once: epoll on Linux (connections edge-triggered, so a
/// connection is registered once and its interest never changes on the request path), `poll(2)`
/// elsewhere (and on Linux when asked, so that branch is tested too), which keeps each
/// descriptor's interest as the loop sets it.
final class Poller {
    /// Which system interface watches the descriptors.
    enum Kind: Sendable {
        /// epoll (Linux only).
        case epoll
        /// `poll(2)`: every platform.
        case poll

        /// epoll where there is one, `poll(2)` otherwise.
        static var automatic: Kind {
            #if os(Linux)
            .epoll
            #else
            .poll
            #endif
        }
    }

    /// One descriptor's readiness.
    struct Event {
        var token: UInt64
        /// Readable, closed by the peer, or failed: reading says which.
        var readable: Bool
        /// Writable, or failed: writing says which.
        var writable: Bool
    }

    let kind: Kind
    #if os(Linux)
    private let epoll: Int32
    private var epollEvents: [epoll_event]
    #endif
    /// The `poll(2)` set: descriptors, their tokens, and each descriptor's place in them.
    private var polled: [pollfd] = []
    private var polledTokens: [UInt64] = []
    private var places: [Int32: Int] = [:]

    struct Failure: Error {
        var message: String
    }

    init(kind: Kind, capacity: Int = 256) throws(Failure) {
        var kind = kind
        #if !os(Linux)
        kind = .poll
        #endif
        self.kind = kind
        #if os(Linux)
        epollEvents = Array(repeating: epoll_event(), count: capacity)
        if kind == .epoll {
            epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
            guard epoll >= 0 else { throw Failure(message: "epoll_create1: \(Sockets.lastError())") }
        } else {
            epoll = -1
        }
        #endif
    }

    deinit {
        #if os(Linux)
        if epoll >= 0 { close(epoll) }
        #endif
    }

    private static let epollIn: UInt32 = 0x001
    private static let epollOut: UInt32 = 0x004
    private static let epollError: UInt32 = 0x008
    private static let epollHangUp: UInt32 = 0x010
    private static let epollReadHangUp: UInt32 = 0x2000
    private static let epollExclusive: UInt32 = 1 << 28
    private static let epollEdge: UInt32 = 1 << 31

    /// Watches a connection: for epoll, readable and writable edges from now on (`setInterest`
    /// changes nothing); for `poll(2)`, readable until told otherwise.
    func addConnection(_ descriptor: Int32, token: UInt64) {
        switch kind {
        case .epoll:
            #if os(Linux)
            control(
                EPOLL_CTL_ADD,
                descriptor,
                token,
                Self.epollIn | Self.epollOut | Self.epollReadHangUp | Self.epollEdge
            )
            #endif
        case .poll:
            addPolled(descriptor, token: token, events: Int16(POLLIN))
        }
    }

    /// Watches a descriptor for reading, level-triggered (the listener, with only one loop woken
    /// per connection on Linux; the wake pipe).
    func addReader(_ descriptor: Int32, token: UInt64, exclusive: Bool = false) {
        switch kind {
        case .epoll:
            #if os(Linux)
            control(EPOLL_CTL_ADD, descriptor, token, Self.epollIn | (exclusive ? Self.epollExclusive : 0))
            #endif
        case .poll:
            addPolled(descriptor, token: token, events: Int16(POLLIN))
        }
    }

    /// What a `poll(2)` descriptor is watched for; edge-triggered epoll watches both always.
    ///
    /// Watched for neither, the descriptor is left out of `poll(2)` (its number negated, which
    /// `poll(2)` skips): it reports a hang-up or an error whatever it is watched for, and a
    /// connection reset while its handler runs would wake the loop again and again until the
    /// answer came.
    func setInterest(_ descriptor: Int32, read: Bool, write: Bool) {
        guard kind == .poll, let place = places[descriptor] else { return }
        polled[place].fd = read || write ? descriptor : ~descriptor
        polled[place].events = (read ? Int16(POLLIN) : 0) | (write ? Int16(POLLOUT) : 0)
    }

    /// Stops watching a descriptor (before it is closed).
    func remove(_ descriptor: Int32) {
        switch kind {
        case .epoll:
            #if os(Linux)
            var event = epoll_event()
            _ = epoll_ctl(epoll, Int32(EPOLL_CTL_DEL), descriptor, &event)
            #endif
        case .poll:
            guard let place = places.removeValue(forKey: descriptor) else { return }
            let last = polled.count - 1
            if place != last {
                polled[place] = polled[last]
                polledTokens[place] = polledTokens[last]
                let moved = polled[place].fd
                places[moved < 0 ? ~moved : moved] = place
            }
            polled.removeLast()
            polledTokens.removeLast()
        }
    }

    /// Waits up to `milliseconds` (-1: no limit) and calls `body` with each ready descriptor.
    func wait(milliseconds: Int32, _ body: (Event) -> Void) {
        switch kind {
        case .epoll:
            #if os(Linux)
            let count = epollEvents.withUnsafeMutableBufferPointer {
                epoll_wait(epoll, $0.baseAddress, Int32($0.count), milliseconds)
            }
            guard count > 0 else { return }
            let failed = Self.epollError | Self.epollHangUp
            for index in 0..<Int(count) {
                let flags = epollEvents[index].events
                body(
                    Event(
                        token: epollEvents[index].data.u64,
                        readable: flags & (Self.epollIn | Self.epollReadHangUp | failed) != 0,
                        writable: flags & (Self.epollOut | failed) != 0
                    )
                )
            }
            #endif
        case .poll:
            let count = polled.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), milliseconds) }
            guard count > 0 else { return }
            // Collected first: `body` may add or remove descriptors.
            var ready: [Event] = []
            let failed = Int16(POLLERR) | Int16(POLLHUP) | Int16(POLLNVAL)
            for index in polled.indices where polled[index].revents != 0 {
                let flags = polled[index].revents
                ready.append(
                    Event(
                        token: polledTokens[index],
                        readable: flags & (Int16(POLLIN) | failed) != 0,
                        writable: flags & (Int16(POLLOUT) | failed) != 0
                    )
                )
                polled[index].revents = 0
            }
            ready.forEach(body)
        }
    }

    private func addPolled(_ descriptor: Int32, token: UInt64, events: Int16) {
        places[descriptor] = polled.count
        polled.append(pollfd(fd: descriptor, events: events, revents: 0))
        polledTokens.append(token)
    }

    #if os(Linux)
    private func control(_ operation: Int32, _ descriptor: Int32, _ token: UInt64, _ flags: UInt32) {
        var event = epoll_event()
        event.events = flags
        event.data.u64 = token
        _ = epoll_ctl(epoll, operation, descriptor, &event)
    }
    #endif
}
