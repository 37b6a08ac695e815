import Foundation
import GroupDecisions

/// What one check runs on: the concerns a store provides, those of a second instance over its
/// storage when one can be opened, and the clock they run on (the suite's, or none: their own, in
/// real time).
struct ConformanceSubject: Sendable {
    let first: SharedCaches
    let second: SharedCaches?
    let clock: ManualClock?

    /// One concern of both instances (the second is the first when none can be opened).
    struct Instances<Concern: Sendable>: Sendable {
        let first: Concern
        let second: Concern?

        /// The second instance, or the first when none can be opened.
        var other: Concern { second ?? first }

        /// Both instances, or the one.
        var all: [Concern] { second.map { [first, $0] } ?? [first] }

        /// The instance the `index`th call of a check goes to: alternately the first and the second.
        func instance(_ index: Int) -> Concern { index.isMultiple(of: 2) ? first : other }
    }

    /// `concern` of both instances, or `nil` when the store does not provide it.
    private func instances<Concern>(_ concern: (SharedCaches) -> Concern?) -> Instances<Concern>? {
        guard let one = concern(first) else { return nil }
        return Instances(first: one, second: second.flatMap(concern))
    }

    var answers: Instances<any SharedAnswerCache>? { instances { $0.answers } }
    var fetchLock: Instances<any SharedFetchLock>? { instances { $0.fetchLock } }
    var rateLimits: Instances<any SharedRateLimitState>? { instances { $0.rateLimits } }
    var fleetBudget: Instances<any SharedFleetBudget>? { instances { $0.fleetBudget } }
    var invalidations: Instances<any SharedInvalidations>? { instances { $0.invalidations } }

    /// The time now, on the cache's clock when the suite moves it.
    var now: Date { clock?.date ?? Date() }

    /// Lets `duration` pass: moves the suite's clock, or sleeps.
    func pass(_ duration: Duration) async throws {
        if let clock { clock.advance(by: duration) } else { try await Task.sleep(for: duration) }
    }

    /// Whether `condition` holds once `duration` has passed: on the suite's clock, checked once
    /// after moving it; in real time, polled every 50 ms for up to ten seconds after sleeping
    /// `duration`, so that a busy machine only makes it slower.
    func eventually(after duration: Duration, _ condition: () async throws -> Bool) async throws -> Bool {
        try await pass(duration)
        guard clock == nil else { return try await condition() }
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            if try await condition() { return true }
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
