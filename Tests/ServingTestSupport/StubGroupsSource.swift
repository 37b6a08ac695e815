package import AppStoreGroups
package import Foundation
import GroupDecisions
import GroupDecisionsTesting
package import GroupPolicy
import Synchronization

/// A groups source that answers from a function of the transaction id, as the client would after
/// Apple's answer (its groups, or the error the client makes of Apple's 404, 429 or 500), and
/// records when each request was sent: the service tests' Apple, without HTTP, in the sandbox only.
package final class StubGroupsSource: GroupsSource, Sendable {
    /// What Apple answers a request: Get Customer Groups' body, or the client's error.
    package enum Answer: Sendable {
        case groups([UInt8])
        case failure(AppStoreGroupsError)
    }

    package typealias Responder = @Sendable (_ transactionID: String, _ now: Date) -> Answer

    private struct State {
        var responder: Responder
        var sent: [(id: String, at: Date)] = []
    }

    private let state: Mutex<State>
    private let clock: @Sendable () -> Date
    private let delay: Duration

    /// - Parameters:
    ///   - delay: How long each answer takes, in real time (for single-flight tests).
    ///   - clock: The clock request times are recorded with.
    ///   - responder: The answer to each request.
    package init(
        delay: Duration = .zero,
        clock: @escaping @Sendable () -> Date = { Date() },
        responder: @escaping Responder = { _, _ in StubGroupsSource.consumerGroup }
    ) {
        self.delay = delay
        self.clock = clock
        self.state = Mutex(State(responder: responder))
    }

    package static let consumerGroup = Answer.groups(Array(Families.memberBody.utf8))
    package static let notFound = Answer.failure(
        AppStoreGroupsError(
            code: .transactionIDNotFound,
            message: "the App Store answered 404 TransactionIdNotFoundError (4040010): Transaction id not found.",
            httpStatus: 404,
            apiErrorCode: 4_040_010,
            apiErrorMessage: "Transaction id not found.",
            attempts: 1
        )
    )
    package static let internalError = Answer.failure(
        AppStoreGroupsError(
            code: .generalInternalError,
            message: "the App Store answered 500 GeneralInternalError (5000000): An unknown error occurred.",
            httpStatus: 500,
            apiErrorCode: 5_000_000,
            apiErrorMessage: "An unknown error occurred.",
            attempts: 1
        )
    )

    /// Apple's 429 with a `Retry-After` at `instant`, as the client reports it.
    package static func tooManyRequests(until instant: Date) -> Answer {
        let milliseconds = (instant.timeIntervalSince1970 * 1000).rounded(.up)
        return .failure(
            StaticGroupsSource.tooManyRequests(retryAfter: Date(timeIntervalSince1970: milliseconds / 1000))
        )
    }

    /// Answers later requests with `responder`.
    package func answer(with responder: @escaping Responder) {
        state.withLock { $0.responder = responder }
    }

    /// The transaction ids asked for, in order.
    package var requests: [String] { state.withLock { $0.sent.map(\.id) } }

    /// When each request was sent, by the stub's clock.
    package var requestTimes: [Date] { state.withLock { $0.sent.map(\.at) } }

    package func customerGroupsAnswer(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (body: [UInt8], response: GetCustomerGroupsResponse) {
        // As the service's source of one sandbox client: another environment is refused, unsent.
        guard environment == .sandbox else {
            throw AppStoreGroupsError(
                code: .invalidArgument,
                message: "no App Store client is configured for the \(environment) environment"
            )
        }
        let now = clock()
        let responder = state.withLock { state in
            state.sent.append((anyTransactionID, now))
            return state.responder
        }
        if delay > .zero {
            do {
                try await Task.sleep(for: delay)
            } catch {
                throw AppStoreGroupsError(code: .cancelled, message: "cancelled")
            }
        }
        switch responder(anyTransactionID, now) {
        case .failure(let error):
            throw error
        case .groups(let body):
            do {
                return (body, try GetCustomerGroupsResponse(jsonBytes: body))
            } catch {
                throw AppStoreGroupsError(code: .invalidResponse, message: "not Get Customer Groups' JSON: \(error)")
            }
        }
    }

    package func customerGroups(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> GetCustomerGroupsResponse {
        try await customerGroupsAnswer(anyTransactionID: anyTransactionID, environment: environment).response
    }
}
