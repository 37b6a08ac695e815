public import AppStoreGroups
public import Foundation
public import GroupDecisions
public import GroupPolicy
import GroupPolicyBasics

/// A `GroupsSource` that answers from a dictionary: for testing an app's handlers with no key and
/// no network.
///
/// ```swift
/// let source = StaticGroupsSource([
///     "2000000123456789": GetCustomerGroupsResponse(groups: [
///         GroupEntry(groupID: "900000000000000000", groupType: .organization,
///                    roles: [RoleEntry(productID: "com.example.teams.pro", role: .admin)])
///     ])
/// ])
/// source.fail("2000000999999999", with: StaticGroupsSource.tooManyRequests(retryAfter: Date() + 60))
/// let service = try GroupDecisionService(policies: policies, source: source)
/// ```
///
/// It gives the same answer in both environments, and throws
/// `AppStoreGroupsError.Code.transactionIDNotFound` (as Apple's 404 becomes) for an id it does
/// not hold. Copies share their answers, failures and counts: change them after handing the source
/// to a service, and read the counts the service's calls left.
public struct StaticGroupsSource: GroupsSource {
    private struct State {
        var answers: [String: GetCustomerGroupsResponse]
        var failures: [String: AppStoreGroupsError] = [:]
        var calls: [String: Int] = [:]
        var total = 0
    }

    private let state: Locked<State>

    /// Creates a source holding these answers, by transaction id.
    ///
    /// - Parameter answers: Each customer's groups, by the transaction id decisions are asked with.
    public init(_ answers: [String: GetCustomerGroupsResponse]) {
        state = Locked(State(answers: answers))
    }

    /// Sets the groups answered for an id, or removes them with `nil`.
    ///
    /// - Parameters:
    ///   - response: The customer's groups, or `nil` to answer `transactionIDNotFound`.
    ///   - anyTransactionID: The transaction id.
    public func setAnswer(_ response: GetCustomerGroupsResponse?, for anyTransactionID: String) {
        state.withLock { $0.answers[anyTransactionID] = response }
    }

    /// Makes every call for an id throw `error`, or answer again with `nil`.
    ///
    /// - Parameters:
    ///   - anyTransactionID: The transaction id.
    ///   - error: What to throw, such as ``tooManyRequests(retryAfter:)``; `nil` to stop failing.
    public func fail(_ anyTransactionID: String, with error: AppStoreGroupsError?) {
        state.withLock { $0.failures[anyTransactionID] = error }
    }

    /// The error Apple's 429 becomes: `AppStoreGroupsError.Code.rateLimitExceeded` with HTTP status
    /// 429, Apple's error code 4290000 and the `Retry-After` instant.
    ///
    /// - Parameter retryAfter: The instant the answer names, or `nil` for a 429 without one.
    /// - Returns: The error.
    public static func tooManyRequests(retryAfter: Date?) -> AppStoreGroupsError {
        AppStoreGroupsError(
            code: .rateLimitExceeded,
            message: "the App Store answered with its rate limit",
            httpStatus: 429,
            apiErrorCode: 4_290_000,
            apiErrorMessage: "Rate limit exceeded.",
            retryAfter: retryAfter,
            attempts: 1
        )
    }

    /// How many calls the source received, for every id.
    public var callCount: Int { state.withLock { $0.total } }

    /// How many calls the source received for one id.
    ///
    /// - Parameter anyTransactionID: The transaction id.
    /// - Returns: The number of calls.
    public func callCount(for anyTransactionID: String) -> Int {
        state.withLock { $0.calls[anyTransactionID] ?? 0 }
    }

    /// The groups held for the id (whatever the environment), its failure, or
    /// `AppStoreGroupsError.Code.transactionIDNotFound`; counts the call.
    ///
    /// - Parameters:
    ///   - anyTransactionID: The transaction id.
    ///   - environment: Ignored: both environments get the same answer.
    /// - Returns: The groups held for the id.
    /// - Throws: The id's failure, or `transactionIDNotFound` for an id it does not hold.
    public func customerGroups(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> GetCustomerGroupsResponse {
        let (answer, failure) = state.withLock { state in
            state.total += 1
            state.calls[anyTransactionID, default: 0] += 1
            return (state.answers[anyTransactionID], state.failures[anyTransactionID])
        }
        if let failure { throw failure }
        guard let answer else {
            throw AppStoreGroupsError(
                code: .transactionIDNotFound,
                message: "the App Store knows no such transaction",
                httpStatus: 404,
                apiErrorCode: 4_040_010,
                apiErrorMessage: "Transaction id not found.",
                attempts: 1
            )
        }
        return answer
    }
}
