import Foundation
import GroupDecisionsTesting
import GroupPolicy
import GroupPolicyBasics
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions
@testable import GroupDecisionsRedis

/// What a shared cache hands back is input like any other: a value no process wrote must not crash
/// the process that reads it, nor grant anything.
@Suite("Decision service: a corrupted shared cache")
struct CorruptSharedStoreTests {
    /// An answer as `CachedGroupsAnswer.encoded(boundTo:)` lays it out, with any fetch time.
    static func encoded(fetchedAtMilliseconds: UInt64, body: String, key: [UInt8] = []) -> [UInt8] {
        var bytes = Array("GPA2".utf8) + [0]
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: fetchedAtMilliseconds >> UInt64(shift)))
        }
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: key.count >> shift))
        }
        return bytes + key + Array(body.utf8)
    }

    @Test("a fetch time after the year 9999 or before 1970 is not an answer")
    func implausibleFetchTime() {
        let body = Families.memberBody
        #expect(CachedGroupsAnswer(encoded: Self.encoded(fetchedAtMilliseconds: UInt64(Int64.max), body: body)) == nil)
        #expect(CachedGroupsAnswer(encoded: Self.encoded(fetchedAtMilliseconds: UInt64.max, body: body)) == nil)
        let latest = CachedGroupsAnswer(encoded: Self.encoded(fetchedAtMilliseconds: 253_402_300_799_999, body: body))
        #expect(latest?.fetchedAt == Date(timeIntervalSince1970: 253_402_300_799.999))
    }

    @Test("instants beyond any calendar print without trapping: timestamps, records, errors")
    func extremeInstantsPrint() {
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: 9.3e15)) == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: -9.3e15)) == "0000-01-01T00:00:00.000Z")
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: .infinity)) == "9999-12-31T23:59:59.999Z")
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: 1_800_000_000.5)) == "2027-01-15T08:00:00.500Z")
        let record = DecisionLogRecord(
            time: Date(timeIntervalSince1970: 1e300),
            customerHash: "00",
            environment: "Sandbox",
            source: "cache",
            fetchedAt: Date(timeIntervalSince1970: Double(Int64.max) / 1000)
        )
        #expect(
            record.jsonLine
                == #"{"time":"9999-12-31T23:59:59.999Z","customer":"00","environment":"Sandbox","source":"cache","#
                + #""fetchedAt":"9999-12-31T23:59:59.999Z","capabilities":[]}"#
        )
        let error = AppStoreGroupsError(
            code: .rateLimitExceeded,
            message: "held back",
            retryAfter: Date(timeIntervalSince1970: Double(Int64.max) / 1000)
        )
        #expect(error.description == "held back (retry after 9.223372036854776e+18 ms since 1970)")
    }

    @Test(
        "Redis holding an answer from the year 292 million and a 429 instant at Int64.max: no crash, nothing granted",
        .requires(.redisServer)
    )
    func corruptedRedisValues() async throws {
        let server = try await RedisServer.start()
        defer { server.stop() }
        let store = try server.store()
        let key = store.answerKey("c1", .sandbox)
        _ = try await store.call(
            [
                Array("SET".utf8), key,
                Self.encoded(fetchedAtMilliseconds: UInt64(Int64.max), body: Families.memberBody, key: key),
            ],
            "SET"
        )
        let stub = StubGroupsSource()
        let lines = RecordingObserver()
        // A busy machine makes real calls look slow: the cache must not be skipped here.
        var configuration = GroupDecisionService.Configuration()
        configuration.sharedCache.health.slowCallsInARow = 0
        // While the corrupted cache is skipped, the process keeps fetching within a share of its own.
        configuration.rateLimits.fallbackShare = 0.25
        let service = try ServiceHarness(
            source: stub,
            sharedCache: store,
            time: .system,
            observer: lines,
            configuration: configuration
        )
        .service
        // The corrupted answer is no answer: the customer is fetched.
        let served = try await service.decision(anyTransactionID: "c1", environment: .sandbox)
        #expect(served.source == .live)
        #expect(stub.requests == ["c1"])
        _ = try await store.call(
            [Array("SET".utf8), store.rateKey(.customerGroups, .sandbox), Array(String(Int64.max).utf8)],
            "SET"
        )
        // An instant that is not one this store writes is a store failure: logged, and this
        // process carries on with its own gate and budget.
        let second = try await service.decision(anyTransactionID: "c2", environment: .sandbox)
        #expect(second.source == .live)
        #expect(stub.requests == ["c1", "c2"])
        #expect(
            lines.lines == [
                "shared cache failed: Redis at 127.0.0.1:\(server.port): GET rate-limit: the instant is not "
                    + "a number of milliseconds"
            ]
        )
    }
}
