import Foundation
public import GroupPolicy

/// Fetches a customer's groups and a group's members from Apple's App Store Server API.
///
/// Configure it once and share it: it is an immutable value, safe to use from any number of
/// tasks. Each request carries a freshly signed ES256 token; ids, limits and tokens are checked
/// before anything is sent; error answers become ``AppStoreGroupsError``s that keep Apple's status,
/// `errorCode` and `errorMessage`; failures worth retrying are retried per ``retryPolicy``.
///
/// ```swift
/// let client = try AppStoreGroupsClient(
///     environment: .sandbox,
///     credentials: AppStoreCredentials(keyID: "2X9R4HXF34", issuerID: issuer, bundleID: "com.example.app",
///                                      privateKeyPEM: p8)
/// )
/// let response = try await client.customerGroups(anyTransactionID: "2000000123456789")
/// ```
public struct AppStoreGroupsClient: Sendable {
    /// Where requests go, and the engine environment answers stand for.
    public let server: AppStoreServer
    /// When failed requests are sent again.
    public let retryPolicy: RetryPolicy
    /// How long one attempt may take, from sending to the last body byte.
    public let timeout: Duration
    /// Bounds on the answers: `ResponseLimits.maximumBytes` (1 MiB by default) caps every body
    /// read; the rest bound decoding.
    public let responseLimits: ResponseLimits

    private let baseURL: String
    private let signer: TokenSigner
    private let transport: any HTTPTransport
    private let timeSource: TimeSource

    /// Creates a client, checking the configuration and loading the key.
    ///
    /// Throws ``AppStoreGroupsError/Code/invalidPrivateKey`` when the key is not an unencrypted
    /// P-256 private key PEM, ``AppStoreGroupsError/Code/invalidConfiguration`` for an empty id, an
    /// unsafe base URL, a retry policy out of range or a timeout that is not positive. Nothing is
    /// sent.
    ///
    /// - Parameters:
    ///   - server: Apple's production or sandbox server, or a custom base URL.
    ///   - credentials: The key, key id, issuer id and bundle id tokens are signed with.
    ///   - transport: What sends the requests. Default: a new ``URLSessionTransport``.
    ///   - retryPolicy: When failed requests are sent again. Default ``RetryPolicy/default``.
    ///   - timeout: How long one attempt may take. Default 30 seconds.
    ///   - responseLimits: Bounds on answers. Default `ResponseLimits.default` (1 MiB bodies).
    ///   - timeSource: The clock and sleep, injectable for tests. Default ``TimeSource/system``.
    /// - Throws: ``AppStoreGroupsError`` when the configuration or the key is unusable.
    public init(
        server: AppStoreServer,
        credentials: AppStoreCredentials,
        transport: any HTTPTransport = URLSessionTransport(),
        retryPolicy: RetryPolicy = .default,
        timeout: Duration = .seconds(30),
        responseLimits: ResponseLimits = .default,
        timeSource: TimeSource = .system
    ) throws(AppStoreGroupsError) {
        if let problem = retryPolicy.problem {
            throw AppStoreGroupsError(code: .invalidConfiguration, message: problem)
        }
        guard timeout > .zero else {
            throw AppStoreGroupsError(code: .invalidConfiguration, message: "the timeout must be positive")
        }
        guard responseLimits.maximumBytes > 0 else {
            throw AppStoreGroupsError(code: .invalidConfiguration, message: "the body size limit must be positive")
        }
        self.baseURL = try server.checkedBaseURL()
        self.signer = try TokenSigner(credentials: credentials)
        self.server = server
        self.retryPolicy = retryPolicy
        self.timeout = timeout
        self.responseLimits = responseLimits
        self.transport = transport
        self.timeSource = timeSource
    }

    /// The engine environment this client's answers stand for, for an `EvaluationContext`.
    public var storeEnvironment: StoreEnvironment { server.storeEnvironment }

    // MARK: Endpoints

    /// Get Customer Groups: every group the customer belongs to for the app.
    ///
    /// `GET /groups/v1/currentGroups/{anyTransactionId}`.
    ///
    /// - Parameter anyTransactionID: Any `originalTransactionId`, `transactionId` or
    ///   `appTransactionId` of the customer: 1 to 128 characters of `A-Z a-z 0-9 _ -`, else the
    ///   call throws ``AppStoreGroupsError/Code/invalidArgument`` without sending anything.
    /// - Returns: Apple's answer, decoded strictly.
    /// - Throws: ``AppStoreGroupsError``.
    public func customerGroups(
        anyTransactionID: String
    ) async throws(AppStoreGroupsError) -> GetCustomerGroupsResponse {
        try await customerGroupsAnswer(anyTransactionID: anyTransactionID).response
    }

    /// Get Customer Groups with the answer's bytes as sent, which the decision service caches so
    /// that a shared cache holds Apple's answer rather than anything derived from it.
    package func customerGroupsAnswer(
        anyTransactionID: String
    ) async throws(AppStoreGroupsError) -> (body: [UInt8], response: GetCustomerGroupsResponse) {
        try RequestValidation.checkIdentifier(anyTransactionID, name: "transaction id")
        let (body, attempts) = try await send(path: "/groups/v1/currentGroups/\(anyTransactionID)")
        let response = try decode(attempts: attempts) { () throws -> GetCustomerGroupsResponse in
            try GetCustomerGroupsResponse(jsonBytes: body, limits: responseLimits)
        }
        return (body, response)
    }

    /// Get Group Members: one page of a group's members.
    ///
    /// `GET /groups/v1/group/{groupId}?limit=&paginationToken=`. For the next page pass the
    /// answer's `paginationToken` and the same `limit`; ``allGroupMembers(groupID:limit:)`` does
    /// that for you.
    ///
    /// - Parameters:
    ///   - groupID: The group's id from Get Customer Groups: 1 to 128 characters of
    ///     `A-Z a-z 0-9 _ -`.
    ///   - limit: The most members per page, 1 to 100; `nil` sends none and lets Apple choose.
    ///   - paginationToken: The previous page's token; `nil` for the first page.
    /// - Returns: One page.
    /// - Throws: ``AppStoreGroupsError``; invalid arguments throw before anything is sent.
    public func groupMembers(
        groupID: String,
        limit: Int? = nil,
        paginationToken: String? = nil
    ) async throws(AppStoreGroupsError) -> GetGroupMembersResponse {
        try RequestValidation.checkIdentifier(groupID, name: "group id")
        try RequestValidation.checkLimit(limit)
        try RequestValidation.checkPaginationToken(paginationToken)
        var query: [String] = []
        if let limit { query.append("limit=\(limit)") }
        if let paginationToken { query.append("paginationToken=" + RequestValidation.percentEncoded(paginationToken)) }
        let path = "/groups/v1/group/\(groupID)" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        let (body, attempts) = try await send(path: path)
        let page = try decode(attempts: attempts) { () throws -> GetGroupMembersResponse in
            try GetGroupMembersResponse(jsonBytes: body, limits: responseLimits)
        }
        if page.hasMore, page.paginationToken == nil {
            throw AppStoreGroupsError(
                code: .invalidResponse,
                message: "the page says hasMore but has no paginationToken",
                httpStatus: 200,
                jsonPath: "paginationToken",
                attempts: attempts
            )
        }
        return page
    }

    /// Every member of a group, fetched page by page as the sequence is iterated.
    ///
    /// Follows `paginationToken` until `hasMore` is false, sending the same `limit` on every page.
    /// Iteration throws ``AppStoreGroupsError`` for a failed page (after retries); a
    /// ``AppStoreGroupsError/Code/paginationTokenExpired`` error means starting over.
    ///
    /// - Parameters:
    ///   - groupID: The group's id: 1 to 128 characters of `A-Z a-z 0-9 _ -`.
    ///   - limit: The most members per page, 1 to 100, or `nil` to send none.
    /// - Returns: The members, lazily.
    /// - Throws: ``AppStoreGroupsError/Code/invalidArgument`` for a bad id or limit, before any
    ///   request.
    public func allGroupMembers(groupID: String, limit: Int? = nil) throws(AppStoreGroupsError) -> GroupMemberSequence {
        try RequestValidation.checkIdentifier(groupID, name: "group id")
        try RequestValidation.checkLimit(limit)
        return GroupMemberSequence(client: self, groupID: groupID, limit: limit)
    }

    // MARK: Internals

    /// A fresh token for one request; exposed to the module's tests.
    func makeToken() throws(AppStoreGroupsError) -> String {
        try signer.token(issuedAt: timeSource.now())
    }

    private func decode<Document>(
        attempts: Int,
        _ body: () throws -> Document
    ) throws(AppStoreGroupsError) -> Document {
        do {
            return try body()
        } catch let error as GroupPolicyError {
            let message: String
            if error.isSyntaxError {
                let place = error.location.map { " at line \($0.line), column \($0.column)" } ?? ""
                message = "the body is not JSON: \(error.message)\(place)"
            } else {
                message = "the App Store's answer is not the documented JSON: \(error.message)"
            }
            throw AppStoreGroupsError(
                code: .invalidResponse,
                message: message,
                httpStatus: 200,
                jsonPath: error.jsonPath,
                attempts: attempts
            )
        } catch {
            throw AppStoreGroupsError(
                code: .invalidResponse,
                message: "the App Store's answer is not the documented JSON: \(error)",
                httpStatus: 200,
                attempts: attempts
            )
        }
    }

    /// Sends `GET path` until it succeeds, fails for good, or runs out of attempts.
    ///
    /// - Returns: The successful answer's body and the number of requests sent.
    private func send(path: String) async throws(AppStoreGroupsError) -> (body: [UInt8], attempts: Int) {
        guard let url = URL(string: baseURL + path) else {
            throw AppStoreGroupsError(code: .invalidArgument, message: "the request URL is not valid")
        }
        var backoffRetries = 0
        var waited = Duration.zero
        let started = timeSource.now()
        /// What is left of the call's bound, or `nil` when it has none.
        func timeLeft() -> Duration? {
            retryPolicy.maximumCallDuration.map { $0 - Duration.roundedUp(from: started, to: timeSource.now()) }
        }
        var lastFailure: AppStoreGroupsError?
        for attempt in 1...retryPolicy.maximumAttempts {
            let attemptTimeout = min(timeout, timeLeft() ?? timeout)
            // A wait is made only with time left after it, but a sleep may overshoot.
            if attemptTimeout <= .zero, let lastFailure { throw lastFailure }
            let outcome = await attemptOnce(url: url, attempt: attempt, timeout: max(attemptTimeout, .milliseconds(1)))
            let failure: AppStoreGroupsError
            switch outcome {
            case .success(let body):
                return (body, attempt)
            case .failure(let error):
                failure = error
            }
            lastFailure = failure
            guard attempt < retryPolicy.maximumAttempts, let wait = waitBeforeRetry(after: failure) else {
                throw failure
            }
            let delay: Duration
            switch wait {
            case .until(let instant):
                delay = Duration.roundedUp(from: timeSource.now(), to: instant)
            case .backoff:
                backoffRetries += 1
                delay = retryPolicy.backoff(beforeRetry: backoffRetries, random: Double.random(in: 0..<1))
            }
            // Waiting less than Retry-After says is not an option, so a wait past the budget is
            // not shortened: the call ends here.
            guard waited + delay <= retryPolicy.maximumTotalWait else { throw failure }
            // Nor is a wait that leaves no time for another attempt within the call's bound.
            if let left = timeLeft(), delay >= left { throw failure }
            waited += delay
            do {
                try await timeSource.sleep(delay)
            } catch {
                throw AppStoreGroupsError(
                    code: .cancelled,
                    message: "cancelled while waiting to retry",
                    attempts: attempt
                )
            }
        }
        // Unreachable: the last attempt either returned or threw above.
        throw AppStoreGroupsError(code: .cancelled, message: "no attempt was made")
    }

    private enum Wait {
        case until(Date)
        case backoff
    }

    /// Whether and how to wait before sending again after `failure`; `nil` means do not retry.
    private func waitBeforeRetry(after failure: AppStoreGroupsError) -> Wait? {
        switch failure.code {
        case .timeout, .transportFailure:
            return .backoff
        case .rateLimitExceeded where failure.httpStatus == 429:
            guard let instant = failure.retryAfter else { return .backoff }
            let wait = Duration.roundedUp(from: timeSource.now(), to: instant)
            return wait <= retryPolicy.maximumRateLimitWait ? .until(instant) : nil
        default:
            if failure.apiErrorCode == 5_000_001 { return .backoff }
            if let status = failure.httpStatus, (500..<600).contains(status) { return .backoff }
            return nil
        }
    }

    /// One request with a fresh token; every answer but a 2xx becomes the failure it stands for.
    private func attemptOnce(url: URL, attempt: Int, timeout: Duration) async -> Result<[UInt8], AppStoreGroupsError> {
        let token: String
        do {
            token = try makeToken()
        } catch {
            return .failure(error)
        }
        let request = HTTPRequest(
            method: "GET",
            url: url,
            headerFields: ["Authorization": "Bearer \(token)", "Accept": "application/json"],
            timeout: timeout,
            maximumResponseBodySize: responseLimits.maximumBytes
        )
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch var error as AppStoreGroupsError {
            error.attempts = attempt
            error.message = Self.redacting(token, in: error.message)
            return .failure(error)
        } catch is CancellationError {
            return .failure(
                AppStoreGroupsError(code: .cancelled, message: "the request was cancelled", attempts: attempt)
            )
        } catch {
            // A transport's own error may quote the request it was given, Authorization included.
            return .failure(
                AppStoreGroupsError(
                    code: .transportFailure,
                    message: Self.redacting(token, in: "the request failed: \(error)"),
                    attempts: attempt
                )
            )
        }
        let limit = responseLimits.maximumBytes
        let announced = response.announcedLength ?? 0
        if announced > limit || response.body.count > limit {
            return .failure(
                AppStoreGroupsError(
                    code: .responseTooLarge,
                    message: "the answer's body is larger than \(limit) bytes",
                    httpStatus: response.status,
                    attempts: attempt
                )
            )
        }
        switch response.status {
        case 200..<300:
            return .success(response.body)
        case 300..<400:
            let location = response.value(forHeader: "Location").map { " to \($0)" } ?? ""
            return .failure(
                AppStoreGroupsError(
                    code: .unexpectedRedirect,
                    message: "the server answered with a redirect\(location); redirects are not followed",
                    httpStatus: response.status,
                    attempts: attempt
                )
            )
        default:
            var error = APIErrorBody.error(status: response.status, body: response.body, attempts: attempt)
            if response.status == 429 {
                error.retryAfter = response.value(forHeader: "Retry-After").flatMap(RetryAfter.instant)
            }
            return .failure(error)
        }
    }

    /// The message with the token, and its signature alone, replaced by `<redacted>`.
    static func redacting(_ token: String, in message: String) -> String {
        var text = message.replacing(token, with: "<redacted>")
        if let signature = token.split(separator: ".").last, signature.count >= 16 {
            text = text.replacing(signature, with: "<redacted>")
        }
        return text
    }
}
