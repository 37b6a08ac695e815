extension HTTPServer {
    /// What one connection, one request, and all of them together may cost.
    package struct Limits: Sendable {
        /// Requests answered at once (read whole and not yet written); a head arriving while that
        /// many are answered is refused ``HTTPRefusal/Kind/tooManyRequests``.
        package var maximumRequests = 64
        /// Connections waiting for a request head, kept-alive ones between requests included.
        package var maximumWaiting = 1024
        /// How long a connection must have waited before a new one may take its place.
        ///
        /// When ``maximumWaiting`` wait, the one waiting longest is answered 408 (or closed, when
        /// it was idle between requests) once it has waited this long: long enough that a client
        /// sending its request at once is never the one dropped. `nil`: never; the new connection
        /// is refused instead.
        package var evictableAfter: Duration? = .milliseconds(50)
        /// The longest head (request line and fields, without the blank line).
        package var maximumHeadBytes = 8192
        /// The longest body; 0 for a server that takes none (any announced body is refused).
        package var maximumBodyBytes = 0
        /// The bodies being read or answered, all connections together.
        package var maximumBodyBytesInFlight = 0
        /// How long a request may take to arrive whole, however slowly it is dripped.
        ///
        /// Counted from when the connection is ready for it (accepted, or its previous answer
        /// written); a kept-alive connection idle that long is closed. Writing an answer has the
        /// same bound, however slowly the client reads it.
        package var readTimeout: Duration = .seconds(5)
        /// How long a handler may take.
        ///
        /// Past it the client gets ``HTTPRefusal/Kind/handlerTimeout``. `nil`: as long as it takes.
        package var handlerTimeout: Duration? = .seconds(30)
        /// How long a closing connection's leftover bytes are read (and dropped) after its answer,
        /// so that closing with unread bytes never turns the answer into a reset.
        package var drainTimeout: Duration = .seconds(1)
        /// The most connections draining; beyond it the one draining longest is closed at once.
        package var maximumClosing = 1024
        /// Whether a connection stays open for the client's next request (HTTP/1.1 unless it says
        /// `Connection: close`); `false`: every answer closes its connection.
        package var keepAlive = true

        /// The defaults: a server of small JSON answers that takes no bodies.
        package init() {}
    }

    /// Where and how the server listens.
    package struct Configuration: Sendable {
        /// An IPv4 address.
        package var host = "127.0.0.1"
        /// 0 for a port the system picks.
        package var port = 0
        package var limits = Limits()
        /// Header fields every answer carries, after `Content-Type` and `Content-Length`.
        package var commonHeaderFields: [(name: String, value: String)] = []
        /// Event loops, each a thread answering its share of the connections: one per core by
        /// default.
        package var eventLoops = HTTPServer.processorCount
        /// Whether the loops watch their connections with `poll(2)` where epoll is available too
        /// (epoll on Linux by default, `poll(2)` elsewhere): the other platforms' branch, tested here.
        package var usesPoll = false

        /// The defaults: 127.0.0.1, a free port, ``Limits/init()``.
        package init() {}
    }
}
