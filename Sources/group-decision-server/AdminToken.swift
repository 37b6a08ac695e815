import Foundation
import GroupPolicy
import GroupPolicyBasics
import HTTPServing

/// The token administrative requests must present (`--admin-token-file`): `POST /invalidate` and
/// `POST /shadow/reset` carry it as `Authorization: Bearer TOKEN`.
///
/// Required when the server listens on anything but a loopback address (anyone who can reach the
/// port could otherwise drop every cached answer, or the shadow report); optional on loopback.
/// Compared in constant time, and never written anywhere: not in errors, logs or `--help`.
struct AdminToken: Sendable {
    private let token: [UInt8]

    /// The shortest token accepted: 32 characters (128 bits of a random hex or base64 string).
    static let minimumLength = 32
    /// The largest token file read: a token and its line end, with room to spare.
    static let maximumFileBytes = 4096

    struct Failure: Error {
        var message: String
    }

    /// Reads the token from a file: its first line, without the line end.
    ///
    /// The file must be a regular file (symbolic links followed, as a mounted secret is) of at most
    /// ``maximumFileBytes``: a FIFO, a device or a directory is refused without being opened, and
    /// a huge file by its size, so a wrong path fails at once with one line.
    init(file path: String) throws(Failure) {
        let text = String(decoding: try Self.readSecretFile(path, maximumBytes: Self.maximumFileBytes), as: UTF8.self)
        let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let token = Array(line.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        guard token.count >= Self.minimumLength else {
            throw Failure(
                message: "the admin token in \(path) is shorter than \(Self.minimumLength) characters "
                    + "(make one with: openssl rand -hex 32)"
            )
        }
        guard token.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw Failure(message: "the admin token in \(path) must be printable ASCII without spaces")
        }
        self.token = token
    }

    /// The bytes of a file holding a secret (the admin token, the App Store key): a regular file,
    /// its symbolic links followed, read with a cap; the one line why not otherwise.
    static func readSecretFile(_ path: String, maximumBytes: Int) throws(Failure) -> [UInt8] {
        do {
            return try BoundedFileReader.readRegularFile(realPath(path) ?? path, name: path, maximumBytes: maximumBytes)
        } catch {
            throw Failure(message: error.message)
        }
    }

    /// Refuses a request without this token (401, naming the header, never the token).
    func check(_ request: HTTPServing.HTTPRequest) throws(ServerResponse) {
        let values = request.headerValues("authorization")
        let prefix = Array("Bearer ".utf8)
        guard values.count == 1, case let presented = Array(values[0].utf8), presented.starts(with: prefix),
            Self.constantTimeEqual(Array(presented.dropFirst(prefix.count)), token)
        else {
            throw .error(
                401,
                "unauthorized",
                "\(request.method) \(request.path) needs the admin token: Authorization: Bearer <token>",
                headerFields: [("WWW-Authenticate", "Bearer")]
            )
        }
    }

    /// Whether the two are equal, in a time that depends on their lengths only.
    static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: left.count ^ right.count)
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            difference |= a ^ b
        }
        return difference == 0 && left.count == right.count
    }
}
