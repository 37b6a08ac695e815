import Foundation

/// Apple's error body, `{ "errorCode": <int64>, "errorMessage": "<text>" }`, read leniently: an
/// answer whose body is empty, not JSON, or without these keys still becomes a typed error built
/// from its HTTP status.
struct APIErrorBody: Decodable, Sendable, Equatable {
    var errorCode: Int64?
    var errorMessage: String?

    /// Reads the body, or returns `nil` when it is not Apple's error body.
    init?(bytes: [UInt8]) {
        guard !bytes.isEmpty, let body = try? JSONDecoder().decode(APIErrorBody.self, from: Data(bytes)) else {
            return nil
        }
        guard body.errorCode != nil || body.errorMessage != nil else { return nil }
        self = body
    }

    /// The typed error for an error answer: the kind comes from Apple's `errorCode` when this
    /// version knows it, else from the status when the status alone says (401, 429), else it is
    /// ``AppStoreGroupsError/Code/apiError``; the raw code and message are always kept.
    static func error(status: Int, body: [UInt8], attempts: Int) -> AppStoreGroupsError {
        let parsed = APIErrorBody(bytes: body)
        let known = parsed?.errorCode.flatMap(AppStoreGroupsError.Code.forAPIErrorCode)
        let code: AppStoreGroupsError.Code
        let message: String
        if let known {
            code = known.code
            message = "the App Store answered \(known.name)"
        } else if status == 401 {
            code = .unauthorized
            message = "the App Store rejected the token (check the key, key id, issuer id, bundle id and clock)"
        } else if status == 429 {
            code = .rateLimitExceeded
            message = "the App Store answered with its rate limit"
        } else {
            code = .apiError
            message =
                parsed?.errorCode != nil
                ? "the App Store answered with an error code this version does not know"
                : "the App Store answered with an error status and no error body"
        }
        return AppStoreGroupsError(
            code: code,
            message: message,
            httpStatus: status,
            apiErrorCode: parsed?.errorCode,
            apiErrorMessage: parsed?.errorMessage,
            attempts: attempts
        )
    }
}
