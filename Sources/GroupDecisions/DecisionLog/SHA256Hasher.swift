#if canImport(CryptoKit)
public import AppStoreGroups
import CryptoKit
#elseif canImport(COpenSSL)
import COpenSSL
#endif

/// SHA-256: CryptoKit on Apple platforms, the system libcrypto elsewhere.
enum SHA256Hasher {
    /// The 32-byte digest of `bytes`.
    static func hash(_ bytes: [UInt8]) -> [UInt8] {
        #if canImport(CryptoKit)
        return Array(SHA256.hash(data: bytes))
        #elseif canImport(COpenSSL)
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let status = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        // EVP_Digest fails only when libcrypto cannot allocate; a record then carries no usable
        // hash rather than the id.
        return status == 1 && length == 32 ? digest : [UInt8](repeating: 0, count: 32)
        #endif
    }

    /// Lower-case hexadecimal.
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
