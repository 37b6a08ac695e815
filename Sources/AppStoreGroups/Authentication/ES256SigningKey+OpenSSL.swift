#if !canImport(CryptoKit) && canImport(COpenSSL)
import COpenSSL

extension ES256SigningKey {
    /// The system libcrypto backend (OpenSSL 3, Linux).
    ///
    /// An `EVP_PKEY` is not changed by signing and OpenSSL allows any number of threads to sign
    /// with one key at once, each with its own `EVP_MD_CTX`, hence `@unchecked Sendable`.
    final class Backend: @unchecked Sendable {
        private let key: OpaquePointer

        init(der: [UInt8]) throws(AppStoreGroupsError) {
            defer { ERR_clear_error() }
            let loaded = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_AutoPrivateKey(nil, &cursor, buffer.count)
            }
            guard let loaded else { throw PEMDocument.invalid("the key is not a readable private key") }
            guard EVP_PKEY_is_a(loaded, "EC") == 1, Self.groupName(of: loaded) == "prime256v1" else {
                EVP_PKEY_free(loaded)
                throw PEMDocument.invalid("the key is not an EC P-256 private key")
            }
            key = loaded
        }

        deinit {
            EVP_PKEY_free(key)
        }

        private static func groupName(of key: OpaquePointer) -> String? {
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1, length < name.count else {
                return nil
            }
            return String(decoding: name[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        func sign(_ message: [UInt8]) throws(AppStoreGroupsError) -> [UInt8] {
            defer { ERR_clear_error() }
            let failure = AppStoreGroupsError(code: .invalidPrivateKey, message: "signing with libcrypto failed")
            guard let context = EVP_MD_CTX_new() else { throw failure }
            defer { EVP_MD_CTX_free(context) }
            guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { throw failure }
            var length = 0
            guard EVP_DigestSign(context, nil, &length, message, message.count) == 1, length > 0 else { throw failure }
            var der = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &der, &length, message, message.count) == 1 else { throw failure }
            let signature = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
                var cursor = buffer.baseAddress
                return d2i_ECDSA_SIG(nil, &cursor, length)
            }
            guard let signature else { throw failure }
            defer { ECDSA_SIG_free(signature) }
            // JWS wants R and S as two 32-byte big-endian numbers, each left-padded with zeros.
            var raw = [UInt8](repeating: 0, count: 64)
            let written = raw.withUnsafeMutableBufferPointer { buffer -> Bool in
                guard let base = buffer.baseAddress else { return false }
                return BN_bn2binpad(ECDSA_SIG_get0_r(signature), base, 32) == 32
                    && BN_bn2binpad(ECDSA_SIG_get0_s(signature), base + 32, 32) == 32
            }
            guard written else { throw failure }
            return raw
        }
    }
}
#endif
