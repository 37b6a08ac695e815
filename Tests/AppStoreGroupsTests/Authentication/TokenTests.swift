import Foundation
import ServingTestSupport
import Testing

@testable import AppStoreGroups

@Suite("Tokens")
struct TokenTests {
    /// The text a base64url segment of a token encodes.
    static func decodePart(_ part: Substring) throws -> String {
        var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return String(decoding: try #require(Data(base64Encoded: base64)), as: UTF8.self)
    }

    @Test(
        "a client token verifies with Python's cryptography against the public key; another key's is rejected",
        .requires(.pythonCryptography),
        arguments: [("test-key.p8", "verified\n", 0), ("other-key.p8", "rejected: bad signature\n", 1)]
    )
    func verifiesIndependently(key: String, output: String, status: Int32) async throws {
        let client = try AppStoreGroupsClient(server: .sandbox, credentials: FakeAppStore.credentials(key: key))
        // The fake server script's independent verifier (Python `cryptography`).
        let result = try await runProcess(
            URL(filePath: "/usr/bin/env"),
            [
                "python3", TestFiles.server.path, "verify",
                "--public-key", TestFiles.fixture("test-key.pub.pem").path,
                "--key-id", FakeAppStore.keyID, "--issuer-id", FakeAppStore.issuerID,
                "--bundle-id", FakeAppStore.bundleID,
            ],
            input: try client.makeToken()
        )
        #expect(result.standardOutput == output)
        #expect(result.status == status)
    }

    @Test(
        "header and claims are exactly Apple's, exp = iat + 300, base64url without padding, from a PKCS#8 or SEC1 key",
        arguments: ["test-key.p8", "test-key-sec1.pem"]
    )
    func structure(key: String) throws {
        let now = Date(timeIntervalSince1970: 1_700_000_000.9)
        let client = try AppStoreGroupsClient(
            server: .sandbox,
            credentials: FakeAppStore.credentials(key: key),
            timeSource: TimeSource(now: { now }, sleep: { _ in })
        )
        let token = try client.makeToken()
        #expect(!token.contains { "=+/".contains($0) })
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        #expect(parts[2].count == 86)  // 64 bytes, base64url without padding
        #expect(try Self.decodePart(parts[0]) == #"{"alg":"ES256","kid":"\#(FakeAppStore.keyID)","typ":"JWT"}"#)
        #expect(
            try Self.decodePart(parts[1])
                == #"{"iss":"\#(FakeAppStore.issuerID)","iat":1700000000,"exp":1700000300,"aud":"appstoreconnect-v1","#
                + #""bid":"\#(FakeAppStore.bundleID)"}"#
        )
    }

    @Test("ids are JSON-escaped in the token")
    func escaping() {
        #expect(TokenSigner.quoted(#"a"b\c"#) == #""a\"b\\c""#)
        #expect(TokenSigner.quoted("a\u{1}\n") == #""a\u0001\n""#)
    }

    @Test("base64url drops padding and uses - and _")
    func base64URL() {
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.encode(Array("ab".utf8)) == "YWI")
        #expect(Base64URL.encode([]) == "")
    }
}
