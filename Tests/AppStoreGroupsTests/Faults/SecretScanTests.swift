import Foundation
import ServingTestSupport
import Testing

@testable import AppStoreGroups

/// The scan the fault tests rely on finds each kind of leak, so a clean scan means something.
@Suite("Secret scan")
struct SecretScanTests {
    @Test("it finds the key in each spelling, a token and its parts, and any JWT-shaped text")
    func findsLeaks() throws {
        let client = try AppStoreGroupsClient(server: .sandbox, credentials: FakeAppStore.credentials())
        let token = try client.makeToken()
        let scan = try SecretScan(tokens: [token])
        let lines = SecretScan.keyMaterial(try TestFiles.text("test-key.p8"))
        let base64 = lines.joined()
        let middle = String(Array(base64)[40..<60])
        let signature = String(token.split(separator: ".")[2])

        #expect(scan.findings(in: "the request failed") == [])
        #expect(scan.findings(in: "Bearer <redacted>") == [])
        #expect(scan.findings(in: "-----BEGIN PRIVATE KEY-----") == ["the PEM armour"])
        #expect(
            scan.findings(in: "key: \(lines[1])") == ["a line of the PEM body", "16 characters of the key's base64"]
        )
        #expect(scan.findings(in: "…\(middle)…") == ["16 characters of the key's base64"])
        // The signature is random base64url, which holds "eyJ" about once in 3,000 tokens.
        let shaped = signature.contains("eyJ") ? ["a JWT-shaped string"] : []
        #expect(scan.findings(in: "sig \(signature)") == shaped + ["a segment of a token"])
        #expect(scan.findings(in: "Bearer \(token)") == ["a JWT-shaped string", "a token", "a segment of a token"])
        // A token the server never saw is still caught by its shape.
        #expect(scan.findings(in: try client.makeToken()).first == "a JWT-shaped string")
    }

    @Test("it finds the private scalar in hex and base64")
    func findsScalar() throws {
        let scan = try SecretScan()
        let pem = try TestFiles.text("test-key.p8")
        let der = try #require(Data(base64Encoded: SecretScan.keyMaterial(pem).joined()))
        let scalar = Array(der)[36..<68]
        #expect(Array(der)[31..<36] == [0x02, 0x01, 0x01, 0x04, 0x20])
        let hex = scalar.map { String(format: "%02x", $0) }.joined()
        #expect(scan.findings(in: hex) == ["the private scalar in hex"])
        #expect(scan.findings(in: hex.uppercased()) == ["the private scalar in hex"])
        let base64URL = Data(scalar).base64EncodedString().replacing("+", with: "-").replacing("/", with: "_")
        #expect(scan.findings(in: base64URL).contains("the private scalar in base64url"))
    }
}
