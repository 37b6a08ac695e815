/// An ECDSA P-256 private key that signs with SHA-256 and returns JWS signatures: the raw 64-byte
/// R‖S form, not DER.
///
/// CryptoKit does the work on Apple platforms, the system libcrypto (OpenSSL 3) elsewhere; both
/// backends take the DER of a PKCS#8 or SEC1 private key and refuse any key that is not P-256.
struct ES256SigningKey: Sendable {
    private let backend: Backend

    /// Loads the key from a `.p8` PEM.
    ///
    /// Throws ``AppStoreGroupsError/Code/invalidPrivateKey`` for anything that is not an
    /// unencrypted P-256 private key; the error never quotes the input.
    init(privateKeyPEM: String) throws(AppStoreGroupsError) {
        let document = try PEMDocument(privateKeyPEM: privateKeyPEM)
        backend = try Backend(der: document.der)
    }

    /// Signs the message: ECDSA P-256 over its SHA-256 digest, as 64 bytes R‖S.
    func sign(_ message: [UInt8]) throws(AppStoreGroupsError) -> [UInt8] {
        let signature = try backend.sign(message)
        guard signature.count == 64 else {
            throw AppStoreGroupsError(code: .invalidPrivateKey, message: "the signature is not 64 bytes")
        }
        return signature
    }
}
