/// One connection's place in a loop: where its exchange stands, its bytes in and out, and its
/// links in the loop's list of connections in the same state.
struct Connection {
    enum State: Equatable {
        /// The slot is free.
        case free
        /// Waiting for a request head (a new connection, or a kept-alive one between requests).
        case waiting
        /// Reading a body announced by `Content-Length`.
        case receiving
        /// The handler is answering.
        case handling
        /// The answer is being written: more than the socket took at once.
        case writing
        /// The answer is written and a FIN sent; what the client still sends is read and dropped.
        case closing
    }

    var descriptor: Int32 = -1
    /// Told apart from the slot's earlier connections by the loop's tokens.
    var generation: UInt32 = 0
    /// Told apart from this connection's earlier requests by a late handler's answer.
    var exchange: UInt32 = 0
    var state = State.free
    /// When the current state began: its timeout counts from there.
    var since = ContinuousClock.Instant.now
    /// When the current request's head was read whole.
    var started = ContinuousClock.Instant.now

    /// Bytes read and not used yet: part of a head, a body, or the client's next request.
    var input: [UInt8] = []
    /// Where to look for the head's end in `input` next.
    var scanned = 0
    /// Whether the socket may hold bytes not read yet (an edge seen, and no short read since).
    var maybeReadable = false
    /// Whether any byte of the current request has come.
    var receivedAny = false
    /// Whether an answer was written on this connection (so waiting with nothing is being idle).
    var answeredAny = false

    /// The request being read or answered.
    var request: HTTPRequest?
    /// Its body's length, while it is read.
    var bodyLength = 0
    /// Whether the connection stays open after the current answer.
    var keepAlive = false
    /// Whether it holds a place among the requests answered at once.
    var holdsRequestPlace = false
    /// The bytes of body it counts among those in flight.
    var bodyBytesReserved = 0

    /// The answer being written: its head, its body, and how much of both is sent.
    var outHead: [UInt8] = []
    var outBody: [UInt8] = []
    var sent = 0
    /// The answer's status, for `answered`.
    var status = 0

    /// Bytes dropped while closing.
    var drained = 0

    /// The neighbours in the loop's list for `state` (-1: none).
    var previous: Int32 = -1
    var next: Int32 = -1
}

/// A first-in-first-out list of a loop's connections, threaded through their slots: appending and
/// removing any of them is O(1), and the oldest is first (every state's timeout is one duration,
/// so the first is the next to expire).
struct ConnectionList {
    var first: Int32 = -1
    var last: Int32 = -1
    var count = 0
}
