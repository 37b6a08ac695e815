#if canImport(CryptoKit)
import CryptoKit

extension ES256SigningKey {
    /// The CryptoKit backend (Apple platforms).
    struct Backend: Sendable {
        private let key: P256.Signing.PrivateKey

        init(der: [UInt8]) throws(AppStoreGroupsError) {
            do {
                key = try P256.Signing.PrivateKey(derRepresentation: der)
            } catch {
                throw PEMDocument.invalid("the key is not an EC P-256 private key")
            }
        }

        func sign(_ message: [UInt8]) throws(AppStoreGroupsError) -> [UInt8] {
            do {
                return Array(try key.signature(for: message).rawRepresentation)
            } catch {
                throw AppStoreGroupsError(code: .invalidPrivateKey, message: "signing failed")
            }
        }
    }
}
#endif
