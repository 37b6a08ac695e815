import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The package's one HTTP/1.1 server: event loops on non-blocking sockets (epoll on Linux,
/// `poll(2)` elsewhere), keep-alive, everything bounded.
///
/// - Loop 0 accepts and deals connections to the loops in turn; each loop reads its connections'
///   heads and bodies, answers, and writes each answer with one `writev`.
/// - A handler answers at once on the loop when it can (``HTTPHandler/atOnce``: a cache hit costs
///   no task, no thread, no queue), or in a task or a thread of its own; its answer comes back to
///   the loop through a queue and a wake pipe.
/// - At most ``Limits/maximumWaiting`` connections wait for a head (kept-alive ones included):
///   when they are all taken, the one that has waited longest makes room once it has waited
///   ``Limits/evictableAfter`` (408, or a plain close for one idle between requests); otherwise
///   the new connection is refused (503).
/// - At most ``Limits/maximumRequests`` requests are answered at once; a head beyond is refused
///   (503). Heads, bodies, bodies in flight and the time to send a request, to answer it and to
///   write the answer are bounded (``Limits``).
/// - Every refusal closes its connection gracefully: the answer, then FIN, then a short drain of
///   what the client still sends, so closing with unread bytes never turns the answer into a
///   reset.
package final class HTTPServer: Sendable {
    /// The port the server listens on (the one the system chose when asked for port 0).
    package let port: Int
    private let core: ServerCore

    /// The cores of this machine.
    package static var processorCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }

    /// Why the server cannot start.
    package struct StartFailure: Error, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }

    /// Binds and listens; nothing is served before ``run(_:)``.
    package init(_ configuration: Configuration) throws(StartFailure) {
        // A client that hangs up before reading its answer must not end the process.
        signal(SIGPIPE, SIG_IGN)
        Sockets.raiseDescriptorLimit()
        let listener: (descriptor: Int32, port: Int)
        do {
            listener = try Sockets.listen(host: configuration.host, port: configuration.port)
        } catch {
            throw StartFailure(message: error.message)
        }
        let limits = configuration.limits
        let loopCount = max(1, min(configuration.eventLoops, limits.maximumWaiting, limits.maximumClosing))
        let core = ServerCore(
            configuration: configuration,
            listener: listener.descriptor,
            loopCount: loopCount
        )
        var loops: [EventLoop] = []
        do {
            for index in 0..<loopCount { loops.append(try EventLoop(index: index, core: core)) }
        } catch {
            close(listener.descriptor)
            throw StartFailure(message: error.message)
        }
        core.loops = loops
        self.core = core
        self.port = listener.port
    }

    /// Serves with `handler` until stopped, on the calling thread and a thread per further loop.
    ///
    /// Returns once ``stop(within:)`` has been called and every loop is done (its connections
    /// answered and closed, or the stop's deadline passed). Called once.
    package func run(_ handler: HTTPHandler) {
        core.handler = handler
        let running = Atomic<Int>(core.loops.count - 1)
        for loop in core.loops.dropFirst() {
            Sockets.spawnThread(stackSize: 8 << 20) {
                loop.run()
                running.subtract(1, ordering: .sequentiallyConsistent)
            }
        }
        core.loops[0].run()
        while running.load(ordering: .sequentiallyConsistent) > 0 { usleep(1000) }
        core.closeListener()
    }

    /// Stops accepting at once, and finishes the requests begun within `gracePeriod`.
    ///
    /// The listening socket closes: the system refuses new connections, and those it had already
    /// taken but the server had not are answered 503 (``HTTPRefusal/Kind/tooManyConnections``),
    /// never left waiting. Requests being read or answered are finished (each answer closing its
    /// connection) for up to `gracePeriod`, and connections idle between requests are closed.
    /// Callable from any thread, more than once: a later call may bring the deadline closer, never
    /// put it later. ``run(_:)`` returns once it is done.
    package func stop(within gracePeriod: Duration) {
        core.stop(within: gracePeriod)
    }

    /// Requests being answered now, all loops together.
    package var requestsInFlight: Int {
        core.counts.requests.load(ordering: .relaxed)
    }
}
