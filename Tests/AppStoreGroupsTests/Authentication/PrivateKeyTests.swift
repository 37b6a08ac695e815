import Foundation
import ServingTestSupport
import Testing

@testable import AppStoreGroups

@Suite("Private keys and the client's configuration")
struct PrivateKeyTests {
    /// The error configuring a client with `pem` throws, or `nil` when it configures.
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

    static let notP256 = "the key is not an EC P-256 private key"
    static let noBlock = "no '-----BEGIN PRIVATE KEY-----' block found"

    /// Each row: a fixture file (a name ending in .p8 or .pem), or the text itself, in which `BODY`
    /// stands for the test key's base64 lines; then the problem the error names.
    @Test(
        "keys that are not P-256 private keys, and text that is no PEM private key, fail at configuration, naming the problem, never the key",
        arguments: [
            ("p384-key.p8", notP256), ("rsa-key.p8", notP256), ("ed25519-key.p8", notP256),
            ("encrypted-key.p8", "the private key is encrypted; export it without a passphrase (.p8 as downloaded)"),
            ("test-key.pub.pem", "the PEM holds a public key; the client needs the private key (.p8)"),
            ("", noBlock), ("hello", noBlock), ("BODY", noBlock),
            ("-----BEGIN PRIVATE KEY-----\nBODY\n", "the PEM block 'PRIVATE KEY' has no END line"),
            (
                "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n",
                "the PEM block 'PRIVATE KEY' is not valid base64"
            ),
            (
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
                "the key is not a readable private key"
            ),
        ]
    )
    func rejectedKeys(source: String, problem: String) throws {
        let valid = try TestFiles.text("test-key.p8")
        let body = SecretScan.keyMaterial(valid).joined(separator: "\n")
        let isFile = source.hasSuffix(".p8") || source.hasSuffix(".pem")
        let pem = isFile ? try TestFiles.text(source) : source.replacing("BODY", with: body)
        let error = try #require(Self.configure(pem))
        #expect(error.code == .invalidPrivateKey)
        #expect(error.message == "invalid private key: " + problem)
        for line in SecretScan.keyMaterial(pem) + SecretScan.keyMaterial(valid) {
            #expect(!error.description.contains(line))
            #expect(!String(reflecting: error).contains(line))
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
        for (keyID, issuerID, bundleID) in [("", "I", "B"), ("K", "", "B"), ("K", "I", "")] {
            let credentials = AppStoreCredentials(
                keyID: keyID,
                issuerID: issuerID,
                bundleID: bundleID,
                privateKeyPEM: pem
            )
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
