import Foundation
import GroupPolicy
import Testing

@testable import AppStoreGroups

/// The decision log: one record per decision, the id only as a salted SHA-256, and its JSON Lines
/// file.
@Suite("Decision log")
struct DecisionLogTests {
    static let salt = Array("0123456789abcdef".utf8)

    @Test("a record per decision served and per decision refused, with the salted hash and never the id")
    func records() async throws {
        let clock = ManualClock()
        let stub = StubAppStore(clock: clock.now)
        let path = FileManager.default.temporaryDirectory.path + "/decisions-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let service = try GroupDecisionService(
            policies: GroupDecisionServiceTests.policies(),
            clients: [stub.client(clock: clock)],
            timeSource: clock.timeSource,
            decisionLog: DecisionLog.jsonLines(path: path, salt: Self.salt)
        )
        _ = try await service.decision(anyTransactionID: "customer-secret-1", environment: .sandbox)
        clock.advance(by: .milliseconds(1_500))
        _ = try await service.decision(anyTransactionID: "customer-secret-1", environment: .sandbox)
        stub.answer { _, _ in StubAppStore.internalError }
        _ = await expectError {
            try await service.decision(anyTransactionID: "customer-secret-2", environment: .sandbox)
        }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let hash = "ffe4c82b690e235acd30e5cb3ed3cb242db0940e90b9532d6a4686d2bca88ec3"
        #expect(
            text.split(separator: "\n") == [
                #"{"time":"2027-01-15T08:00:00.000Z","customer":"\#(hash)","environment":"Sandbox","policyRevision":"49c9b1f4e538bd3a","source":"live","fetchedAt":"2027-01-15T08:00:00.000Z","capabilities":["family.shared-lists","family.space"]}"#,
                #"{"time":"2027-01-15T08:00:01.500Z","customer":"\#(hash)","environment":"Sandbox","policyRevision":"49c9b1f4e538bd3a","source":"cache","fetchedAt":"2027-01-15T08:00:00.000Z","capabilities":["family.shared-lists","family.space"]}"#,
                #"{"time":"2027-01-15T08:00:01.500Z","customer":"\#(SHA256Hasher.hex(SHA256Hasher.hash(Self.salt + Array("customer-secret-2".utf8))))","environment":"Sandbox","policyRevision":"49c9b1f4e538bd3a","capabilities":[],"error":"general-internal-error"}"#,
            ]
        )
        #expect(!text.contains("customer-secret"))
    }

    @Test("timestamps: UTC with milliseconds, leap days and instants before 1970")
    func timestamps() {
        #expect(
            DecisionLogRecord.timestamp(Date(timeIntervalSince1970: 1_800_000_000.123)) == "2027-01-15T08:00:00.123Z"
        )
        #expect(DecisionLogRecord.timestamp(Date(timeIntervalSince1970: 951_782_400.5)) == "2000-02-29T00:00:00.500Z")
        #expect(DecisionLogRecord.timestamp(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59.000Z")
        #expect(DecisionLogRecord.timestamp(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
    }

    @Test("a short salt and an unopenable file are refused")
    func configuration() {
        #expect(throws: AppStoreGroupsError.self) { try DecisionLog(salt: Array("short".utf8)) { _ in } }
        #expect(throws: AppStoreGroupsError.self) {
            try DecisionLog.jsonLines(path: "/nonexistent-directory/decisions.jsonl", salt: Self.salt)
        }
    }

    @Test("SHA-256 of known inputs")
    func digest() {
        #expect(
            SHA256Hasher.hex(SHA256Hasher.hash(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        #expect(
            SHA256Hasher.hex(SHA256Hasher.hash([]))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        )
    }
}
