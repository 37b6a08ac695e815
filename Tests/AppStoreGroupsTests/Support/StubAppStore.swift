import Foundation
import GroupPolicy

@testable import AppStoreGroups

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
    static let failure = AppStoreGroupsError(code: .storeFailure, message: "Redis at 127.0.0.1:1: connection refused")

    private let lock = NSLock()
    private var answerCalls = 0

    /// How many times an answer was asked for.
    var answerLookups: Int { lock.withLock { answerCalls } }

    func answer(
        forCustomer customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        lock.withLock { answerCalls += 1 }
        throw Self.failure
    }

    func setAnswer(
        _ answer: CachedGroupsAnswer,
        forCustomer customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) { throw Self.failure }

    func acquireFetchLock(
        forCustomer customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool { throw Self.failure }

    func releaseFetchLock(
        forCustomer customerID: String,
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

    func invalidate(customer customerID: String) async throws(AppStoreGroupsError) { throw Self.failure }

    func invalidateAll() async throws(AppStoreGroupsError) { throw Self.failure }
}

/// Lines a service logged.
final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    var lines: [String] { lock.withLock { stored } }

    var sink: @Sendable (String) -> Void { { line in self.lock.withLock { self.stored.append(line) } } }
}
