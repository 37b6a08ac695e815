import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The shared-cache guard: back-off after a failure, skipping a cache that is consistently slow,
/// recovery, and no customer id in what it reports.
@Suite("Shared-cache guard")
struct SharedCacheGuardTests {
    let clock = ManualClock()
    /// An in-memory shared cache whose every call takes ``ScriptedGroupsCache/delay`` on `clock`
    /// and fails while `failsEveryCall` is set (its message naming the key, as Redis's error text does).
    let cache: ScriptedGroupsCache
    let observer = RecordingObserver()
    let stub: StubGroupsSource

    init() {
        cache = ScriptedGroupsCache(combinedCalls: .native, forwardsBudget: false, clock: clock)
        stub = StubGroupsSource(clock: clock.now)
    }

    /// The guard of ``cache`` on ``clock``, telling ``observer``.
    func guarded() -> SharedCacheGuard {
        SharedCacheGuard(
            SharedCaches(cache),
            health: SharedCacheHealth(),
            timeSource: clock.timeSource,
            observer: observer
        )
    }

    @Test(
        "a cache answering every call in 200 ms, under its timeout, is skipped after five such calls; a customer with no answer in this process is still read from it, not fetched again"
    )
    func consistentlySlowCacheIsSkipped() async throws {
        cache.delay = .milliseconds(200)
        // No answers kept in the process: every decision asks the shared cache first.
        let service = try GroupDecisionServiceTests.service(stub, clock: clock, shared: cache, observer: observer) {
            $0.localCache.timeToLive = .zero
        }
        let start = clock.date
        #expect(try await service.decide("c1").source == .live)
        // Four slow calls (the answer, the lock with the answer and generation, the gate's instant,
        // the answer's write releasing the lock): not yet five in a row.
        #expect(cache.calls.count == 4)
        #expect(abs(clock.date.timeIntervalSince(start) - 0.8) < 0.001)
        #expect(observer.lines == [])
        // The next decision's first call is the fifth: the cache is left alone from there on.
        #expect(try await service.decide("c2").source == .live)
        #expect(cache.calls.count == 5)
        #expect(abs(clock.date.timeIntervalSince(start) - 1.0) < 0.001)
        #expect(
            observer.lines
                == ["shared cache failed (slow): the shared cache answered 5 calls in a row in 150 ms or more"]
        )
        // The next uncached decisions within the retry interval cost one read each (of a customer this process holds no
        // answer for: cheaper than a first fetch the budget may refuse) and no other cache time.
        let before = clock.date
        #expect(try await service.decide("c3").source == .live)
        #expect(try await service.decide("c4").source == .live)
        #expect(abs(clock.date.timeIntervalSince(before) - 0.4) < 0.001)
        #expect(cache.calls.count == 7)
        // Skipped as slow, the cache still answers for c1, whose answer it holds: no second fetch
        // (before, the skip sent c1's request to Apple again, or to a 503 once the budget was spent).
        #expect(try await service.decide("c1").source == .cache)
        #expect(cache.calls.count == 8)
        #expect(stub.requests == ["c1", "c2", "c3", "c4"])
        // After the interval the cache is tried again; answering promptly, it is used again.
        cache.delay = .zero
        clock.advance(by: .seconds(5))
        #expect(try await service.decide("c5").source == .live)
        #expect(observer.events("shared cache recovered") == ["shared cache recovered"])
        #expect(try await cache.inner.answer(anyTransactionID: "c5", in: .sandbox) != nil)
    }

    @Test(
        "the rate-limit gate's calls still reach a cache skipped for slowness, and skip one that failed for the retry interval; writes still go, and recovery is reported once"
    )
    func gateCallsOutliveASlownessSkip() async throws {
        cache.delay = .milliseconds(200)
        let guarded = self.guarded()
        let read = { (evenWhenSlow: Bool) async -> Date?? in
            await guarded.read(evenWhenSlow: evenWhenSlow) { () throws(AppStoreGroupsError) in
                try await cache.rateLimitedUntil(.customerGroups, in: .sandbox)
            }
        }
        for _ in 0..<5 { #expect(await read(false) == .some(nil)) }
        #expect(
            observer.lines == [
                "shared cache failed (slow): the shared cache answered 5 calls in a row in 150 ms or more"
            ]
        )
        // Skipped for slowness: a read is not sent, the gate's call is, and its time does not count.
        #expect(await read(false) == nil)
        #expect(cache.calls.count == 5)
        for _ in 0..<6 { #expect(await read(true) == .some(nil)) }
        #expect(cache.calls.count == 11)
        #expect(observer.lines.count == 1)
        // A failure makes the skip a failure's: the gate's calls skip the cache too; writes still go.
        cache.failsEveryCall = true
        #expect(await read(true) == nil)
        #expect(cache.calls.count == 12)
        #expect(await read(true) == nil)
        #expect(cache.calls.count == 12)
        let write = await expectError {
            try await guarded.write { () throws(AppStoreGroupsError) in try await cache.invalidateAll() }
        }
        #expect(write?.code == .sharedCacheFailure)
        #expect(cache.calls.count == 13)
        // The read's failure and the write's are each reported.
        #expect(observer.lines.count == 3, "\(observer.lines)")
        // Once the interval ends and the cache answers promptly, all is sent again and the recovery reported once.
        cache.failsEveryCall = false
        cache.delay = .zero
        clock.advance(by: .seconds(5))
        #expect(await read(false) == .some(nil))
        #expect(await read(true) == .some(nil))
        #expect(cache.calls.count == 15)
        #expect(observer.events("shared cache recovered") == ["shared cache recovered"])
    }

    @Test("slow calls that are not in a row do not skip the cache; the threshold and count are settings")
    func occasionalSlowCallsAreKept() async throws {
        let guarded = self.guarded()
        for round in 0..<10 {
            cache.delay = round % 5 == 4 ? .zero : .milliseconds(200)
            #expect(await guarded.read { () throws(AppStoreGroupsError) in try await cache.invalidateAll() } != nil)
        }
        #expect(cache.calls.count == 10)
        #expect(observer.events.isEmpty)
        // Exactly the threshold counts as slow.
        cache.delay = .milliseconds(150)
        for _ in 0..<5 {
            _ = await guarded.read { () throws(AppStoreGroupsError) in try await cache.invalidateAll() }
        }
        #expect(observer.lines.count == 1)
    }

    @Test("a customer id the cache's error repeats is replaced, in the observer's event and in the error thrown")
    func customerIDsAreScrubbed() async throws {
        cache.failsEveryCall = true
        let service = try GroupDecisionServiceTests.service(stub, clock: clock, shared: cache, observer: observer)
        let error = await expectError { try await service.invalidate(anyTransactionID: "2000000123456789") }
        #expect(
            error?.message
                == "Redis at 127.0.0.1:6379 answered GET with an error: ERR unknown command 'GET', with args "
                + "beginning with: 'app:sandbox:groups:<customer>'"
        )
        #expect(try await service.decide("2000000987654321").source == .live)
        #expect(observer.events.filter { $0.contains("2000000") }.isEmpty)
        #expect(observer.lines.count == 1)
        #expect(observer.events("invalidated") == ["invalidated one, shared cache not updated"])
    }
}
