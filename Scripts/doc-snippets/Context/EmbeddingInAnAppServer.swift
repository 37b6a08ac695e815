import GroupDecisions
import Logging

/// The article's app server.
protocol AppServer: Sendable {
    func run() async throws
}

/// The observer of the article "Observing decisions".
struct LoggingObserver: GroupDecisionObserver {
    let logger: Logger
}
