import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The service's background work, and what its observer hears: its own work and the policies' reloads.
@Suite("Decision service: lifecycle and observer")
struct ServiceLifecycleTests {

    @Test("run() sweeps expired answers every sweep interval, and throws CancellationError when cancelled")
    func runSweeps() async throws {
        let harness = try ServiceHarness(source: StaticGroupsSource(["c1": Families.member])) {
            $0.freshness = FreshnessPolicy(timeToLive: .seconds(120))
            $0.localCache.sweepInterval = .seconds(60)
        }
        let (service, clock) = (harness.service, harness.clock)
        _ = try await service.decide("c1")
        #expect(service.cachedBytes > 0)
        let runner = Task { try await service.run() }
        // The manual clock's sleep moves it on at once: sweeps come one a minute of its time.
        try await waitUntil { service.cachedBytes == 0 }
        #expect(service.cachedBytes == 0)
        #expect(clock.date >= Date(timeIntervalSince1970: 1_800_000_120))
        runner.cancel()
        await #expect(throws: CancellationError.self) { try await runner.value }
        #expect(clock.sleeps.allSatisfy { $0 == .seconds(60) })
    }

    @Test(
        "the observer hears a miss, the fetch and a hit; one that keeps no event is told them all, to no effect"
    )
    func observerEvents() async throws {
        let harness = try ServiceHarness(source: StaticGroupsSource(["c1": Families.member]), time: .system)
        let service = harness.service
        _ = try await service.decide("c1")
        _ = try await service.decide("c1")
        _ = await expectError { try await service.decide("c2") }
        _ = await expectError { try await service.decide("c2") }
        try await service.invalidate(anyTransactionID: "c1")
        try await service.invalidateAll()
        #expect(
            harness.observer.events == [
                "cache miss", "fetch started: customer-groups", "fetch finished: customer-groups 200", "cache hit",
                "cache miss", "fetch started: customer-groups", "fetch finished: customer-groups 404", "cache hit",
                "invalidated one", "invalidated all",
            ]
        )
        // An observer that keeps none of the events (the protocol's defaults) is told them, to no effect.
        struct Deaf: GroupDecisionObserver {}
        let deaf = try GroupDecisionService(
            policies: Families.policies(),
            source: StaticGroupsSource(["c1": Families.member]),
            sharedCaches: SharedCaches(),
            configuration: .exactCounts(burst: 1),
            observer: Deaf(),
            decisionLog: try DecisionLog(salt: Array("0123456789abcdef".utf8)) { _ in }
        )
        #expect(try await deaf.decide("c1").source == .live)
        #expect(try await deaf.decide("c1").source == .cache)
        let refused = await expectError { try await deaf.decide("c2") }
        #expect(refused?.code == .rateLimitExceeded)
    }

    @Test("policy reloads reach the service's observer with their revision, however the store was reloaded")
    func reloadsReachTheObserver() async throws {
        let policy = try String(
            contentsOf: TestFiles.packageRoot.appending(path: "Policies/family-sharing.json"),
            encoding: .utf8
        )
        let directory = try PolicyDirectory(["policy.json": policy])
        let store = try directory.store(reloadInterval: .milliseconds(10))
        let observer = RecordingObserver()
        var service: GroupDecisionService? = try ServiceHarness(
            source: StaticGroupsSource([:]),
            time: .system,
            observer: observer,
            policies: store
        )
        .service
        let first = store.revision
        try directory.write("policy.json", policy + "\n")
        let runner = Task { try await store.run() }
        try await waitUntil { store.generation >= 2 }
        let second = store.revision
        #expect(second != first)
        runner.cancel()
        _ = try? await runner.value
        try directory.write("policy.json", "{")
        _ = store.reload()
        #expect(
            observer.events == [
                "policy reloaded: \(second) generation 2", "policy reload failed: invalid-policy, \(second) serving",
            ]
        )
        // A service that is gone is no longer told.
        withExtendedLifetime(service) {}
        service = nil
        _ = store.reload()
        #expect(observer.events.count == 2)
    }
}
