import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups

@Suite("Private keys and the client's configuration")
struct PrivateKeyTests {
    /// The base64 lines of a PEM: what must never appear in an error.
    static func configure(_ pem: String) -> AppStoreGroupsError? {
        do {
            _ = try AppStoreGroupsClient(
                server: .sandbox,
                credentials: AppStoreCredentials(keyID: "K", issuerID: "I", bundleID: "B", privateKeyPEM: pem)
            )
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "keys that are not P-256 private keys fail at configuration, naming the problem, never the key",
        arguments: [
            ("p384-key.p8", "invalid private key: the key is not an EC P-256 private key"),
            ("rsa-key.p8", "invalid private key: the key is not an EC P-256 private key"),
            ("ed25519-key.p8", "invalid private key: the key is not an EC P-256 private key"),
            (
                "encrypted-key.p8",
                "invalid private key: the private key is encrypted; export it without a passphrase (.p8 as downloaded)"
            ),
            (
                "test-key.pub.pem",
                "invalid private key: the PEM holds a public key; the client needs the private key (.p8)"
            ),
        ]
    )
    func rejectedKeys(file: String, message: String) throws {
        let pem = try TestFiles.text(file)
        let error = try #require(Self.configure(pem))
        #expect(error.code == .invalidPrivateKey)
        #expect(error.message == message)
        for line in SecretScan.keyMaterial(pem) {
            #expect(!error.description.contains(line))
            #expect(!String(reflecting: error).contains(line))
        }
    }

    @Test("text that is not a PEM private key fails at configuration")
    func notPEM() throws {
        let valid = try TestFiles.text("test-key.p8")
        let body = SecretScan.keyMaterial(valid).joined(separator: "\n")
        let cases: [(String, String)] = [
            ("", "invalid private key: no '-----BEGIN PRIVATE KEY-----' block found"),
            ("hello", "invalid private key: no '-----BEGIN PRIVATE KEY-----' block found"),
            (body, "invalid private key: no '-----BEGIN PRIVATE KEY-----' block found"),
            (
                "-----BEGIN PRIVATE KEY-----\n\(body)\n",
                "invalid private key: the PEM block 'PRIVATE KEY' has no END line"
            ),
            (
                "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n",
                "invalid private key: the PEM block 'PRIVATE KEY' is not valid base64"
            ),
            (
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
                "invalid private key: the key is not a readable private key"
            ),
        ]
        for (pem, message) in cases {
            let error = try #require(Self.configure(pem))
            #expect(error.code == .invalidPrivateKey)
            #expect(error.message == message)
            for line in SecretScan.keyMaterial(valid) { #expect(!error.description.contains(line)) }
        }
    }

    @Test("a PEM with CRLF line ends and surrounding text loads")
    func tolerantFraming() throws {
        let pem = try TestFiles.text("test-key.p8").replacingOccurrences(of: "\n", with: "\r\n")
        #expect(Self.configure("Apple key\r\n" + pem + "\r\n") == nil)
        #expect(Self.configure(try TestFiles.text("test-key-sec1.pem")) == nil)
    }

    @Test("empty ids fail at configuration")
    func emptyIDs() throws {
        let pem = try TestFiles.text("test-key.p8")
        for credentials in [
            AppStoreCredentials(keyID: "", issuerID: "I", bundleID: "B", privateKeyPEM: pem),
            AppStoreCredentials(keyID: "K", issuerID: "", bundleID: "B", privateKeyPEM: pem),
            AppStoreCredentials(keyID: "K", issuerID: "I", bundleID: "", privateKeyPEM: pem),
        ] {
            #expect(throws: AppStoreGroupsError.self) {
                try AppStoreGroupsClient(server: .sandbox, credentials: credentials)
            }
        }
    }

    @Test("credentials never print or dump the key")
    func redactedCredentials() throws {
        let pem = try TestFiles.text("test-key.p8")
        let credentials = AppStoreCredentials(keyID: "K", issuerID: "I", bundleID: "B", privateKeyPEM: pem)
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in [String(describing: credentials), String(reflecting: credentials), "\(credentials)", dumped] {
            #expect(!text.contains("BEGIN"))
            for line in SecretScan.keyMaterial(pem) { #expect(!text.contains(line)) }
            #expect(text.contains("<redacted>"))
        }
        #expect(
            credentials.description == "AppStoreCredentials(keyID: K, issuerID: I, bundleID: B, privateKey: <redacted>)"
        )
    }

    @Test("unsafe base URLs fail at configuration")
    func baseURLs() throws {
        let credentials = try FakeAppStore.credentials()
        for text in [
            "http://example.com", "ftp://127.0.0.1", "https://", "https://example.com?x=1", "https://u:p@example.com",
            "https://example.com#f", "file:///tmp",
        ] {
            let url = try #require(URL(string: text))
            #expect(throws: AppStoreGroupsError.self, "\(text)") {
                try AppStoreGroupsClient(server: .custom(baseURL: url), credentials: credentials)
            }
        }
        for text in [
            "http://127.0.0.1:8080", "http://localhost/", "http://[::1]:9", "https://proxy.example.com/apple/",
        ] {
            let url = try #require(URL(string: text))
            #expect(throws: Never.self, "\(text)") {
                try AppStoreGroupsClient(server: .custom(baseURL: url), credentials: credentials)
            }
        }
    }

    @Test("the environment maps to the engine's StoreEnvironment")
    func storeEnvironment() throws {
        let credentials = try FakeAppStore.credentials()
        #expect(
            try AppStoreGroupsClient(server: .production, credentials: credentials).storeEnvironment == .production
        )
        #expect(try AppStoreGroupsClient(server: .sandbox, credentials: credentials).storeEnvironment == .sandbox)
        let proxy = try #require(URL(string: "https://proxy.example.com/apple"))
        let custom = AppStoreServer.custom(baseURL: proxy, storeEnvironment: .production)
        #expect(try AppStoreGroupsClient(server: custom, credentials: credentials).storeEnvironment == .production)
        #expect(AppStoreServer.production.baseURL.absoluteString == "https://api.storekit.apple.com")
        #expect(AppStoreServer.sandbox.baseURL.absoluteString == "https://api.storekit-sandbox.apple.com")
    }
}
