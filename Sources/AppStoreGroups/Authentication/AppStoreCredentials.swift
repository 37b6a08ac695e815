/// What the client signs its tokens with: the In-App Purchase key from App Store Connect and the
/// ids that go with it.
///
/// The private key never appears in ``description``, `debugDescription` or a mirror; printing or
/// dumping credentials shows the ids only.
public struct AppStoreCredentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The key's id from App Store Connect (the JWT header's `kid`).
    public var keyID: String
    /// The issuer id from App Store Connect, a UUID (the `iss` claim).
    public var issuerID: String
    /// The app's bundle id (the `bid` claim).
    public var bundleID: String
    /// The key's `.p8` file content: a PEM-encoded, unencrypted ECDSA P-256 private key.
    var privateKeyPEM: String

    /// Creates credentials.
    ///
    /// The key is checked when a client is created with them.
    ///
    /// - Parameters:
    ///   - keyID: The key's id from App Store Connect.
    ///   - issuerID: The issuer id from App Store Connect.
    ///   - bundleID: The app's bundle id.
    ///   - privateKeyPEM: The `.p8` file's content (`-----BEGIN PRIVATE KEY-----` …).
    public init(keyID: String, issuerID: String, bundleID: String, privateKeyPEM: String) {
        self.keyID = keyID
        self.issuerID = issuerID
        self.bundleID = bundleID
        self.privateKeyPEM = privateKeyPEM
    }

    /// The ids, with the key redacted.
    public var description: String {
        "AppStoreCredentials(keyID: \(keyID), issuerID: \(issuerID), bundleID: \(bundleID), privateKey: <redacted>)"
    }

    /// The ids, with the key redacted.
    public var debugDescription: String { description }

    /// The ids, with the key redacted, so `dump` never shows it.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "keyID": keyID, "issuerID": issuerID, "bundleID": bundleID, "privateKey": "<redacted>",
            ]
        )
    }
}
