import Foundation
import GroupPolicy
import GroupPolicyBasics

/// Makes the ES256 JWTs Apple's App Store Server API accepts, one per request.
///
/// Header `{"alg":"ES256","kid":…,"typ":"JWT"}`; claims `iss`, `iat`, `exp` = `iat` + 300 s (as
/// Apple's own libraries do), `aud` `appstoreconnect-v1`, `bid`.
struct TokenSigner: Sendable {
    /// How long a token is valid: five minutes, well under Apple's maximum of an hour.
    static let lifetimeSeconds: Int64 = 300
    static let audience = "appstoreconnect-v1"

    let keyID: String
    let issuerID: String
    let bundleID: String
    private let key: ES256SigningKey

    init(credentials: AppStoreCredentials) throws(AppStoreGroupsError) {
        for (name, value) in [
            ("key id", credentials.keyID), ("issuer id", credentials.issuerID), ("bundle id", credentials.bundleID),
        ] where value.isEmpty {
            throw AppStoreGroupsError(code: .invalidConfiguration, message: "the \(name) is empty")
        }
        keyID = credentials.keyID
        issuerID = credentials.issuerID
        bundleID = credentials.bundleID
        key = try ES256SigningKey(privateKeyPEM: credentials.privateKeyPEM)
    }

    /// A token issued at `now` (rounded down to the second).
    func token(issuedAt now: Date) throws(AppStoreGroupsError) -> String {
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        let header = #"{"alg":"ES256","kid":"# + Self.quoted(keyID) + #","typ":"JWT"}"#
        let claims =
            #"{"iss":"# + Self.quoted(issuerID) + #","iat":\#(issuedAt),"exp":\#(issuedAt + Self.lifetimeSeconds),"#
            + #""aud":"# + Self.quoted(Self.audience) + #","bid":"# + Self.quoted(bundleID) + "}"
        let signingInput = Base64URL.encode(header.utf8) + "." + Base64URL.encode(claims.utf8)
        let signature = try key.sign(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// A JSON string literal, escaped the way the engine's writer escapes every JSON string.
    static func quoted(_ text: String) -> String {
        JSONWriter.quoted(text)
    }
}
