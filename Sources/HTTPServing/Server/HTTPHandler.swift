/// What a server does with requests: answers them, words its refusals, and hears of every answer.
package struct HTTPHandler: Sendable {
    /// Where a request that is not answered at once is answered.
    package enum Work: Sendable {
        /// In a task of its own (the handler may suspend: a fetch, a wait).
        case task(@Sendable (HTTPRequest) async -> HTTPResponse)
        /// On a thread of its own with a stack of `stackSize` bytes: for handlers that compute
        /// long or recurse deep, which must not hold one of Swift's few cooperative threads.
        case thread(stackSize: Int, @Sendable (HTTPRequest) -> HTTPResponse)
    }

    /// The answer when it can be given on the connection's event loop without waiting for
    /// anything (a cache hit), or `nil` to hand the request to `work`: no task, no thread, no
    /// queue on the way.
    package var atOnce: (@Sendable (HTTPRequest) -> HTTPResponse?)?
    package var work: Work
    /// The answer to a request the server refuses on its own.
    package var refuse: @Sendable (HTTPRefusal) -> HTTPResponse
    /// Called on the event loop once an answer is written (or given up on): keep it short.
    package var answered: (@Sendable (HTTPExchange) -> Void)?

    /// A handler of these parts.
    package init(
        atOnce: (@Sendable (HTTPRequest) -> HTTPResponse?)? = nil,
        work: Work,
        refuse: @escaping @Sendable (HTTPRefusal) -> HTTPResponse,
        answered: (@Sendable (HTTPExchange) -> Void)? = nil
    ) {
        self.atOnce = atOnce
        self.work = work
        self.refuse = refuse
        self.answered = answered
    }
}

/// One answered request, for an access log and metrics.
package struct HTTPExchange: Sendable {
    /// The method and path, `nil` when the head was refused before it could be read.
    package var method: String?
    package var path: String?
    package var status: Int
    /// From the head's arrival (or the refusal's cause) until the answer was handed to the system.
    package var duration: Duration
}
