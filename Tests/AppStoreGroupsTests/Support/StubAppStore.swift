import Foundation
import GroupDecisionsTesting
import GroupPolicy

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// An in-process transport that answers Get Customer Groups from a function of the transaction id,
/// and records when each request was sent.
final class StubAppStore: HTTPTransport, @unchecked Sendable {
    typealias Responder = @Sendable (_ transactionID: String, _ now: Date) -> HTTPResponse

    private let lock = NSLock()
    private var responder: Responder
    private var sent: [(id: String, at: Date)] = []
    private let clock: @Sendable () -> Date
    private let delay: Duration

    /// - Parameters:
    ///   - delay: How long each answer takes, in real time (for single-flight tests).
    ///   - clock: The clock request times are recorded with.
    ///   - responder: The answer to each request.
    init(
        delay: Duration = .zero,
        clock: @escaping @Sendable () -> Date = { Date() },
        responder: @escaping Responder = { _, _ in StubAppStore.consumerGroup }
    ) {
        self.delay = delay
        self.clock = clock
        self.responder = responder
    }

    static let consumerBody = #"{"groups":[{"groupId":"g1","groupType":"CONSUMER"}]}"#
    static let consumerGroup = HTTPResponse(status: 200, body: Array(consumerBody.utf8))
    static let notFound = HTTPResponse(
        status: 404,
        body: Array(#"{"errorCode":4040010,"errorMessage":"Transaction id not found."}"#.utf8)
    )
    static let internalError = HTTPResponse(
        status: 500,
        body: Array(#"{"errorCode":5000000,"errorMessage":"An unknown error occurred."}"#.utf8)
    )

    static func tooManyRequests(until instant: Date) -> HTTPResponse {
        HTTPResponse(
            status: 429,
            headerFields: ["Retry-After": String(Int64((instant.timeIntervalSince1970 * 1000).rounded(.up)))],
            body: Array(#"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#.utf8)
        )
    }

    func answer(with responder: @escaping Responder) {
        lock.withLock { self.responder = responder }
    }

    /// The transaction ids asked for, in order.
    var requests: [String] { lock.withLock { sent.map(\.id) } }

    /// When each request was sent, by the stub's clock.
    var requestTimes: [Date] { lock.withLock { sent.map(\.at) } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
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
    func client(environment: StoreEnvironment = .sandbox, clock: ManualClock? = nil) throws -> AppStoreGroupsClient {
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
final class UnreachableGroupsStore: SharedGroupsCache, @unchecked Sendable {
    static let failure = AppStoreGroupsError(
        code: .sharedCacheFailure,
        message: "Redis at 127.0.0.1:1: connection refused"
    )

    private let lock = NSLock()
    private var answerCalls = 0

    /// How many times an answer was asked for.
    var answerLookups: Int { lock.withLock { answerCalls } }

    func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        lock.withLock { answerCalls += 1 }
        throw Self.failure
    }

    func setAnswer(
        _ answer: CachedGroupsAnswer,
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) { throw Self.failure }

    func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration { throw Self.failure }

    func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool { throw Self.failure }

    func acquireFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool { throw Self.failure }

    func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    )
        async throws(AppStoreGroupsError)
    { throw Self.failure }

    func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date? { throw Self.failure }

    func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    )
        async throws(AppStoreGroupsError)
    { throw Self.failure }

    func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) { throw Self.failure }

    func invalidate(groupID: String) async throws(AppStoreGroupsError) { throw Self.failure }

    func invalidateAll() async throws(AppStoreGroupsError) { throw Self.failure }
}

/// What a service told its observer, one line per event in the order told.
final class RecordingObserver: GroupDecisionObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    /// Every event, as a line.
    var events: [String] { lock.withLock { stored } }

    /// The lines of the events whose line starts with `prefix`.
    func events(_ prefix: String) -> [String] { events.filter { $0.hasPrefix(prefix) } }

    /// The shared cache's failures, as `shared cache failed: <error>`.
    var lines: [String] { events("shared cache failed") }

    private func record(_ line: String) { lock.withLock { stored.append(line) } }

    private static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    func cacheHit(_ event: GroupDecisionEvent.CacheHit) {
        record("cache hit\(event.fromSharedCache ? " (shared)" : "")")
    }
    func cacheMiss(_ event: GroupDecisionEvent.CacheMiss) { record("cache miss") }
    func staleServed(_ event: GroupDecisionEvent.StaleServed) { record("stale served: \(event.error.code)") }
    func fetchStarted(_ event: GroupDecisionEvent.FetchStarted) { record("fetch started: \(event.endpoint)") }
    func fetchFinished(_ event: GroupDecisionEvent.FetchFinished) {
        record("fetch finished: \(event.endpoint) \(event.httpStatus.map(String.init) ?? "no status")")
    }
    func rateLimited(_ event: GroupDecisionEvent.RateLimited) {
        let requested = event.requestedRetryAfter.map { String(Self.milliseconds($0)) } ?? "none"
        record("rate limited: \(event.endpoint) until \(Self.milliseconds(event.retryAfter)) (asked \(requested))")
    }
    func budgetExhausted(_ event: GroupDecisionEvent.BudgetExhausted) {
        record("budget exhausted: \(event.endpoint)\(event.heldByRetryAfter ? " (Retry-After)" : "")")
    }
    func sharedCacheFailed(_ event: GroupDecisionEvent.SharedCacheFailure) {
        record("shared cache failed\(event.slow ? " (slow)" : ""): \(event.error)")
    }
    func sharedCacheRecovered(_ event: GroupDecisionEvent.SharedCacheRecovery) { record("shared cache recovered") }
    func invalidated(_ event: GroupDecisionEvent.Invalidation) {
        let shared = event.sharedCacheUpdated.map { $0 ? "shared cache updated" : "shared cache not updated" }
        record("invalidated \(event.allCustomers ? "all" : "one")\(shared.map { ", \($0)" } ?? "")")
    }
    func policyReloaded(_ event: GroupDecisionEvent.PolicyReload) {
        record("policy reloaded: \(event.revision) generation \(event.generation)")
    }
    func policyReloadFailed(_ event: GroupDecisionEvent.PolicyReloadFailure) {
        record("policy reload failed: \(event.error.code), \(event.revision) serving")
    }
}
