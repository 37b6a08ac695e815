public import Foundation
import GroupPolicy
import GroupPolicyBasics

/// The one error type of the `AppStoreGroups` module: what went wrong (``code``) and the context
/// Apple or the network gave.
///
/// An error answer from Apple keeps everything Apple sent: the HTTP status (``httpStatus``), the
/// raw `errorCode` (``apiErrorCode``) and `errorMessage` (``apiErrorMessage``), even for codes this
/// version does not know. A rate-limit error carries the instant Apple named (``retryAfter``); a
/// malformed answer carries the JSON path of the offending value (``jsonPath``).
///
/// Neither the error nor its ``description`` ever contains the signing key or a token.
public struct AppStoreGroupsError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    ///
    /// New kinds may be added; switch with a `default`.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case invalidArgument = "invalid-argument"
            case invalidConfiguration = "invalid-configuration"
            case invalidPrivateKey = "invalid-private-key"
            case unauthorized
            case invalidTransactionID = "invalid-transaction-id"
            case invalidGroupID = "invalid-group-id"
            case invalidLimit = "invalid-limit"
            case invalidPaginationToken = "invalid-pagination-token"
            case paginationTokenExpired = "pagination-token-expired"
            case transactionIDNotFound = "transaction-id-not-found"
            case groupNotFound = "group-not-found"
            case rateLimitExceeded = "rate-limit-exceeded"
            case generalInternalError = "general-internal-error"
            case generalInternalRetryableError = "general-internal-retryable-error"
            case apiError = "api-error"
            case unexpectedRedirect = "unexpected-redirect"
            case responseTooLarge = "response-too-large"
            case invalidResponse = "invalid-response"
            case timeout
            case transportFailure = "transport-failure"
            case cancelled
        }

        private let identifier: String
        private init(_ base: Base) { identifier = base.rawValue }

        /// A code another module of this package defines for its own failures (the serving
        /// layer's shared-cache failure), so this module names none of them.
        package init(identifier: String) { self.identifier = identifier }

        /// An id, limit or pagination token the client refused before sending anything.
        public static let invalidArgument = Code(.invalidArgument)
        /// A client configuration that cannot work: an empty key id, issuer id or bundle id, a base
        /// URL that is not `https` (or `http` to a loopback host), a retry policy or timeout out of
        /// range.
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// A private key that is not a PEM-encoded, unencrypted ECDSA P-256 private key.
        public static let invalidPrivateKey = Code(.invalidPrivateKey)
        /// HTTP 401: Apple rejected the token (wrong key, key id, issuer id, bundle id or clock).
        public static let unauthorized = Code(.unauthorized)
        /// `InvalidTransactionIdError` (4000006).
        public static let invalidTransactionID = Code(.invalidTransactionID)
        /// `InvalidGroupIdError` (4000225).
        public static let invalidGroupID = Code(.invalidGroupID)
        /// `InvalidLimitError` (4000004).
        public static let invalidLimit = Code(.invalidLimit)
        /// `InvalidPaginationTokenError` (4000014).
        public static let invalidPaginationToken = Code(.invalidPaginationToken)
        /// `PaginationTokenExpiredError` (4000017): start the listing again without a token.
        public static let paginationTokenExpired = Code(.paginationTokenExpired)
        /// `TransactionIdNotFoundError` (4040010).
        public static let transactionIDNotFound = Code(.transactionIDNotFound)
        /// `GroupNotFoundError` (4040022): the group is gone (for example its subscription ended);
        /// refresh the customer's group ids through Get Customer Groups.
        public static let groupNotFound = Code(.groupNotFound)
        /// `RateLimitExceededError` (4290000), or any HTTP 429.
        ///
        /// ``AppStoreGroupsError/retryAfter`` holds the instant Apple named, when it named one.
        public static let rateLimitExceeded = Code(.rateLimitExceeded)
        /// `GeneralInternalError` (5000000).
        public static let generalInternalError = Code(.generalInternalError)
        /// `GeneralInternalRetryableError` (5000001).
        public static let generalInternalRetryableError = Code(.generalInternalRetryableError)
        /// Any other error answer: an `errorCode` this version does not know (kept in
        /// ``AppStoreGroupsError/apiErrorCode``), or an error status without Apple's error body.
        public static let apiError = Code(.apiError)
        /// An HTTP 3xx answer.
        ///
        /// Redirects are never followed, so the token never travels to a host the client was not
        /// configured with.
        public static let unexpectedRedirect = Code(.unexpectedRedirect)
        /// An answer whose body is larger than the configured limit (1 MiB by default), announced by
        /// `Content-Length` or counted while reading.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// A successful answer whose body is not the documented JSON;
        /// ``AppStoreGroupsError/jsonPath`` names the offending value.
        public static let invalidResponse = Code(.invalidResponse)
        /// No complete answer within the configured timeout.
        public static let timeout = Code(.timeout)
        /// The request failed below HTTP: connection refused or reset, DNS, TLS, a truncated body.
        public static let transportFailure = Code(.transportFailure)
        /// The calling task was cancelled.
        public static let cancelled = Code(.cancelled)

        /// The code's identifier, such as `group-not-found`.
        public var description: String { identifier }

        /// The kind matching one of Apple's documented `errorCode` values, or `nil` for a code this
        /// version does not know.
        static func forAPIErrorCode(_ errorCode: Int64) -> (code: Code, name: String)? {
            switch errorCode {
            case 4_000_006: (.invalidTransactionID, "InvalidTransactionIdError")
            case 4_000_225: (.invalidGroupID, "InvalidGroupIdError")
            case 4_000_004: (.invalidLimit, "InvalidLimitError")
            case 4_000_014: (.invalidPaginationToken, "InvalidPaginationTokenError")
            case 4_000_017: (.paginationTokenExpired, "PaginationTokenExpiredError")
            case 4_040_010: (.transactionIDNotFound, "TransactionIdNotFoundError")
            case 4_040_022: (.groupNotFound, "GroupNotFoundError")
            case 4_290_000: (.rateLimitExceeded, "RateLimitExceededError")
            case 5_000_000: (.generalInternalError, "GeneralInternalError")
            case 5_000_001: (.generalInternalRetryableError, "GeneralInternalRetryableError")
            default: nil
            }
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong, for people.
    public var message: String
    /// The HTTP status of Apple's answer, when there was one.
    public var httpStatus: Int?
    /// Apple's `errorCode`, exactly as sent, when the answer had Apple's error body.
    public var apiErrorCode: Int64?
    /// Apple's `errorMessage`, exactly as sent, when the answer had one.
    public var apiErrorMessage: String?
    /// For a rate-limit error, the instant from Apple's `Retry-After` header.
    ///
    /// The next request may be sent from then on. `nil` when the header was missing or not a UNIX
    /// time in milliseconds.
    public var retryAfter: Date?
    /// For an ``Code/invalidResponse`` error: the JSON path of the offending value, such as
    /// `groups[0].groupId`.
    public var jsonPath: String?
    /// How many requests the failed call sent, retries included; 0 when it sent none.
    public var attempts: Int

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What kind of failure this is.
    ///   - message: What went wrong, for people. It must not contain the key or a token.
    ///   - httpStatus: The HTTP status of the answer, if there was one.
    ///   - apiErrorCode: Apple's raw `errorCode`, if sent.
    ///   - apiErrorMessage: Apple's raw `errorMessage`, if sent.
    ///   - retryAfter: The instant from a `Retry-After` header.
    ///   - jsonPath: The JSON path of an offending value.
    ///   - attempts: How many requests were sent.
    public init(
        code: Code,
        message: String,
        httpStatus: Int? = nil,
        apiErrorCode: Int64? = nil,
        apiErrorMessage: String? = nil,
        retryAfter: Date? = nil,
        jsonPath: String? = nil,
        attempts: Int = 0
    ) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.apiErrorCode = apiErrorCode
        self.apiErrorMessage = apiErrorMessage
        self.retryAfter = retryAfter
        self.jsonPath = jsonPath
        self.attempts = attempts
    }

    /// Whether this error is an error answer from the API (an HTTP 4xx or 5xx status), as opposed
    /// to a failure to get an answer or to a bad request refused before sending.
    public var isErrorAnswer: Bool {
        guard let httpStatus else { return false }
        return (400..<600).contains(httpStatus)
    }

    /// One line: the message, then the status, Apple's code and message, and the attempts made.
    ///
    /// Control characters (a newline or ESC in Apple's `errorMessage`, say) are escaped as JSON
    /// escapes them, so the line stays one line.
    public var description: String {
        var text = message
        var context: [String] = []
        if let httpStatus { context.append("HTTP \(httpStatus)") }
        if let apiErrorCode { context.append("errorCode \(apiErrorCode)") }
        if let apiErrorMessage { context.append("errorMessage \"\(apiErrorMessage)\"") }
        if let retryAfter {
            // Any instant prints: one too far for whole milliseconds in 64 bits (a corrupted
            // shared cache's, say) must not trap while an error is being reported.
            let milliseconds = (retryAfter.timeIntervalSince1970 * 1000).rounded()
            let text = abs(milliseconds) < 9e18 ? String(Int64(milliseconds)) : "\(milliseconds)"
            context.append("retry after \(text) ms since 1970")
        }
        if let jsonPath { context.append("at \(jsonPath)") }
        if attempts > 1 { context.append("after \(attempts) attempts") }
        if !context.isEmpty { text += " (" + context.joined(separator: ", ") + ")" }
        return text.escapingControlCharacters
    }
}
