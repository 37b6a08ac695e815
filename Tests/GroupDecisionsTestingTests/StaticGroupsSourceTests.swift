import AppStoreGroups
import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import GroupDecisions

/// The public test seam: a source answering from a dictionary, and a service over it with no key and no network.
@Suite("Static groups source")
struct StaticGroupsSourceTests {

    @Test("answers what it holds in both environments, transactionIDNotFound otherwise, and counts every call")
    func answersAndCounts() async throws {
        let source = StaticGroupsSource(["c1": Families.member])
        #expect(try await source.customerGroups(anyTransactionID: "c1", environment: .sandbox) == Families.member)
        #expect(try await source.customerGroups(anyTransactionID: "c1", environment: .production) == Families.member)
        let unknown = await expectError {
            try await source.customerGroups(anyTransactionID: "c2", environment: .sandbox)
        }
        #expect(unknown?.code == .transactionIDNotFound)
        #expect(unknown?.httpStatus == 404)
        #expect(unknown?.apiErrorCode == 4_040_010)
        // The defaulted requirement: the response's own JSON as the bytes a shared cache keeps.
        let answer = try await source.customerGroupsAnswer(anyTransactionID: "c1", environment: .sandbox)
        #expect(
            String(decoding: answer.body, as: UTF8.self) == #"{"groups":[{"groupId":"g1","groupType":"CONSUMER"}]}"#
        )
        #expect(answer.response == Families.member)
        #expect(source.callCount == 4)
        #expect(source.callCount(for: "c1") == 3)
        #expect(source.callCount(for: "c2") == 1)
    }

    @Test("fails a given id with a given error, a 429 with its Retry-After included, until told otherwise")
    func failures() async throws {
        let source = StaticGroupsSource(["c1": Families.member])
        let instant = Date(timeIntervalSince1970: 1_800_000_060)
        source.fail("c1", with: StaticGroupsSource.tooManyRequests(retryAfter: instant))
        let limited = await expectError {
            try await source.customerGroups(anyTransactionID: "c1", environment: .sandbox)
        }
        #expect(limited?.code == .rateLimitExceeded)
        #expect(limited?.httpStatus == 429)
        #expect(limited?.retryAfter == instant)
        source.fail("c1", with: nil)
        #expect(try await source.customerGroups(anyTransactionID: "c1", environment: .sandbox) == Families.member)
        source.setAnswer(nil, for: "c1")
        let gone = await expectError { try await source.customerGroups(anyTransactionID: "c1", environment: .sandbox) }
        #expect(gone?.code == .transactionIDNotFound)
    }

    @Test("a service over it: a decision, cached, and its 429 closing the gate for every customer")
    func serviceOverIt() async throws {
        let clock = ManualClock()
        let source = StaticGroupsSource(["c1": Families.member, "c2": Families.member])
        let service = try ServiceHarness(source: source, clock: clock) { $0.rateLimits.maximumRateLimitWait = .zero }
            .service
        let first = try await service.decision(anyTransactionID: "c1", environment: .sandbox)
        #expect(first.source == .live)
        #expect(first.decision.capabilities.sorted() == ["family.shared-lists", "family.space"])
        #expect(try await service.decision(anyTransactionID: "c1", environment: .sandbox).source == .cache)
        #expect(source.callCount == 1)
        let retryAfter = clock.date.addingTimeInterval(30)
        source.fail("c3", with: StaticGroupsSource.tooManyRequests(retryAfter: retryAfter))
        let limited = await expectError { try await service.decision(anyTransactionID: "c3", environment: .sandbox) }
        #expect(limited?.retryAfter == retryAfter)
        let held = await expectError { try await service.decision(anyTransactionID: "c2", environment: .sandbox) }
        #expect(held?.code == .rateLimitExceeded)
        #expect(held?.httpStatus == nil)
        #expect(source.callCount == 2)
    }
}
