public import AppStoreGroups
public import GroupPolicy

/// Where a ``GroupDecisionService`` gets a customer's groups: Apple in production, anything a test
/// likes.
///
/// The App Store clients are the production source, one per environment (give them to
/// ``GroupDecisionService/init(policies:clients:sharedCaches:configuration:timeSource:observer:decisionLog:candidatePolicies:)``,
/// or use one `AppStoreGroupsClient` as a source for its own environment). `StaticGroupsSource`
/// answers from a dictionary, so an app can test its handlers with no key and no network.
///
/// The service checks the transaction id, spends the rate budget and honours the 429 gate before it
/// asks a source, and caches what the source answers; a source only answers.
public protocol GroupsSource: Sendable {
    /// The customer's groups in one environment: what Get Customer Groups answers.
    ///
    /// - Parameters:
    ///   - anyTransactionID: Any of the customer's transaction ids, already checked to be 1 to 128
    ///     characters of `A-Z a-z 0-9 _ -`.
    ///   - environment: The environment the answer stands for.
    /// - Returns: The customer's groups.
    /// - Throws: `AppStoreGroupsError`, as the client throws it:
    ///   `AppStoreGroupsError.Code.transactionIDNotFound` for a customer Apple does not know (the
    ///   service remembers it for the negative time to live), and a 429 as
    ///   `AppStoreGroupsError.Code.rateLimitExceeded` with `AppStoreGroupsError.httpStatus` 429
    ///   and `AppStoreGroupsError.retryAfter` (the service closes its gate until then).
    func customerGroups(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> GetCustomerGroupsResponse

    /// The customer's groups with the bytes a shared cache keeps for them.
    ///
    /// The default calls ``customerGroups(anyTransactionID:environment:)`` and keeps the response's
    /// own JSON (`GetCustomerGroupsResponse.jsonBytes()`); the App Store client answers with Apple's
    /// body as it was sent.
    ///
    /// - Parameters:
    ///   - anyTransactionID: Any of the customer's transaction ids.
    ///   - environment: The environment the answer stands for.
    /// - Returns: The answer's bytes, and the groups they decode to.
    /// - Throws: `AppStoreGroupsError`, as ``customerGroups(anyTransactionID:environment:)`` does.
    func customerGroupsAnswer(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (body: [UInt8], response: GetCustomerGroupsResponse)
}

extension GroupsSource {
    /// The groups from ``customerGroups(anyTransactionID:environment:)``, with their own JSON as the
    /// bytes a shared cache keeps.
    public func customerGroupsAnswer(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (body: [UInt8], response: GetCustomerGroupsResponse) {
        let response = try await customerGroups(anyTransactionID: anyTransactionID, environment: environment)
        return (response.jsonBytes(), response)
    }
}

extension AppStoreGroupsClient: GroupsSource {
    /// Get Customer Groups for this client's environment (see
    /// ``customerGroups(anyTransactionID:)``); `AppStoreGroupsError.Code.invalidArgument`, nothing
    /// sent, for another environment than ``storeEnvironment``.
    public func customerGroups(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> GetCustomerGroupsResponse {
        guard environment == storeEnvironment else { throw AppStoreClientsSource.unconfigured(environment) }
        return try await customerGroups(anyTransactionID: anyTransactionID)
    }

    /// Get Customer Groups for this client's environment with Apple's body as it was sent; refuses
    /// another environment as ``customerGroups(anyTransactionID:environment:)`` does.
    public func customerGroupsAnswer(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (body: [UInt8], response: GetCustomerGroupsResponse) {
        guard environment == storeEnvironment else { throw AppStoreClientsSource.unconfigured(environment) }
        return try await customerGroupsAnswer(anyTransactionID: anyTransactionID)
    }
}

/// The production source of ``GroupDecisionService/init(policies:clients:sharedCaches:configuration:timeSource:observer:decisionLog:candidatePolicies:)``:
/// one App Store client per environment.
struct AppStoreClientsSource: GroupsSource {
    private let clients: [StoreEnvironment: AppStoreGroupsClient]

    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` for two clients of one
    ///   environment.
    init(_ clients: [AppStoreGroupsClient]) throws(AppStoreGroupsError) {
        var byEnvironment: [StoreEnvironment: AppStoreGroupsClient] = [:]
        for client in clients {
            guard byEnvironment.updateValue(client, forKey: client.storeEnvironment) == nil else {
                throw AppStoreGroupsError(
                    code: .invalidConfiguration,
                    message: "two clients for the \(client.storeEnvironment) environment"
                )
            }
        }
        self.clients = byEnvironment
    }

    static func unconfigured(_ environment: StoreEnvironment) -> AppStoreGroupsError {
        AppStoreGroupsError(
            code: .invalidArgument,
            message: "no client is configured for the \(environment) environment"
        )
    }

    private func client(for environment: StoreEnvironment) throws(AppStoreGroupsError) -> AppStoreGroupsClient {
        guard let client = clients[environment] else { throw Self.unconfigured(environment) }
        return client
    }

    func customerGroups(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> GetCustomerGroupsResponse {
        try await client(for: environment).customerGroups(anyTransactionID: anyTransactionID)
    }

    func customerGroupsAnswer(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (body: [UInt8], response: GetCustomerGroupsResponse) {
        try await client(for: environment).customerGroupsAnswer(anyTransactionID: anyTransactionID)
    }
}
