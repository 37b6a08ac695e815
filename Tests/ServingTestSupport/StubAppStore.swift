package import AppStoreGroups
package import Foundation
package import GroupDecisions
import GroupDecisionsRedis
package import GroupDecisionsTesting
package import GroupPolicy

/// An in-process transport that answers Get Customer Groups from a function of the transaction id,
/// and records when each request was sent.
package final class StubAppStore: HTTPTransport, @unchecked Sendable {
    package typealias Responder = @Sendable (_ transactionID: String, _ now: Date) -> HTTPResponse

    private let lock = NSLock()
    private var responder: Responder
    private var sent: [(id: String, at: Date)] = []
    private let clock: @Sendable () -> Date
    private let delay: Duration

    /// - Parameters:
    ///   - delay: How long each answer takes, in real time (for single-flight tests).
    ///   - clock: The clock request times are recorded with.
    ///   - responder: The answer to each request.
    package init(
        delay: Duration = .zero,
        clock: @escaping @Sendable () -> Date = { Date() },
        responder: @escaping Responder = { _, _ in StubAppStore.consumerGroup }
    ) {
        self.delay = delay
        self.clock = clock
        self.responder = responder
    }

    package static let consumerBody = #"{"groups":[{"groupId":"g1","groupType":"CONSUMER"}]}"#
    package static let consumerGroup = HTTPResponse(status: 200, body: Array(consumerBody.utf8))
    package static let notFound = HTTPResponse(
        status: 404,
        body: Array(#"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#.utf8)
    )
    package static let internalError = HTTPResponse(
        status: 500,
        body: Array(#"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#.utf8)
    )

    package static func tooManyRequests(until instant: Date) -> HTTPResponse {
        HTTPResponse(
            status: 429,
            headerFields: ["Retry-After": String(Int64((instant.timeIntervalSince1970 * 1000).rounded(.up)))],
            body: Array(#"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#.utf8)
        )
    }

    package func answer(with responder: @escaping Responder) {
        lock.withLock { self.responder = responder }
    }

    /// The transaction ids asked for, in order.
    package var requests: [String] { lock.withLock { sent.map(\.id) } }

    /// When each request was sent, by the stub's clock.
    package var requestTimes: [Date] { lock.withLock { sent.map(\.at) } }

    package func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let id = request.url.lastPathComponent
        let now = clock()
        let responder = lock.withLock {
            sent.append((id, now))
            return self.responder
        }
        if delay > .zero { try await Task.sleep(for: delay) }
        return responder(id, now)
    }

    /// A client on this transport for `environment`, without retries.
    package func client(
        environment: StoreEnvironment = .sandbox,
        clock: ManualClock? = nil
    ) throws -> AppStoreGroupsClient {
        try AppStoreGroupsClient(
            server: .custom(
                baseURL: URL(string: "http://127.0.0.1:9") ?? URL(filePath: "/"),
                storeEnvironment: environment
            ),
            credentials: FakeAppStore.credentials(),
            transport: self,
            retryPolicy: .none,
            timeSource: clock?.timeSource ?? .system
        )
    }
}

/// A groups store that is always down, counting the calls it gets.
package final class UnreachableGroupsStore: SharedGroupsCache, @unchecked Sendable {
    package static let failure = AppStoreGroupsError(
        code: .sharedCacheFailure,
        message: "Redis at 127.0.0.1:1: connection refused"
    )

    private let lock = NSLock()
    private var answerCalls = 0

    /// A store that fails every call.
    package init() {}

    /// How many times an answer was asked for.
    package var answerLookups: Int { lock.withLock { answerCalls } }

    package func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        lock.withLock { answerCalls += 1 }
        throw Self.failure
    }

    package func setAnswer(
        _ answer: CachedGroupsAnswer,
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) { throw Self.failure }

    package func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration { throw Self.failure }

    package func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool { throw Self.failure }

    package func acquireFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool { throw Self.failure }

    package func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    )
        async throws(AppStoreGroupsError)
    { throw Self.failure }

    package func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date? { throw Self.failure }

    package func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    )
        async throws(AppStoreGroupsError)
    { throw Self.failure }

    package func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) {
        throw Self.failure
    }

    package func invalidate(groupID: String) async throws(AppStoreGroupsError) { throw Self.failure }

    package func invalidateAll() async throws(AppStoreGroupsError) { throw Self.failure }
}
