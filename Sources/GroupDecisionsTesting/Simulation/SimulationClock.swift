import AppStoreGroups
import Foundation
import GroupPolicyBasics
import Synchronization

/// The clock a fleet simulation runs its services, its App Store and its faults on: time moves only
/// when the simulation moves it, or (for a store that keeps the wall clock) with the wall clock too.
///
/// A sleep does not wait for real time: it registers a deadline and suspends until the clock
/// reaches it. The simulation's driver moves the clock to the earliest deadline once every task
/// has gone as far as it can (see ``FleetRun``), so a 250-millisecond wait costs microseconds, and
/// sleepers wake in the order of their deadlines.
///
/// With ``followsWallClock`` the time shown is the wall clock plus an offset that only grows: time
/// never runs slower than real time, so a store that refills its budget or expires its keys on the
/// wall clock never sees more real time pass than the simulation counts (see the article
/// "Simulating a fleet", section "Clocks").
final class SimulationClock: Sendable {
    private struct Sleeper {
        var deadline: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        /// The time shown, when the clock does not follow the wall clock.
        var virtual: Date
        /// What is added to the wall clock, when it does.
        var offset: TimeInterval = 0
        var sleepers: [UInt64: Sleeper] = [:]
        var nextSleeper: UInt64 = 0
        /// Sleeps cancelled before they registered.
        var cancelled: Set<UInt64> = []
        /// Calls to the store under way, and who waits for none to be.
        var callsInFlight = 0
        var callWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Whether the time shown is the wall clock plus an offset.
    let followsWallClock: Bool
    private let state: Mutex<State>
    /// Bumped by every reading and every sleep: the driver's sign that some task still runs.
    private let readings = Atomic<UInt64>(0)

    /// A clock starting at `start` that moves only when moved, or following the wall clock.
    init(start: Date, followsWallClock: Bool) {
        self.followsWallClock = followsWallClock
        state = Mutex(State(virtual: start))
    }

    /// The time shown.
    func now() -> Date {
        readings.add(1, ordering: .relaxed)
        return state.withLock { current($0) }
    }

    /// The time shown, read by the driver: not counted as activity.
    var shown: Date { state.withLock { current($0) } }

    private func current(_ state: State) -> Date {
        followsWallClock ? Date().addingTimeInterval(state.offset) : state.virtual
    }

    /// The services' time source: this clock, and sleeps that wait for it.
    var timeSource: TimeSource {
        TimeSource(now: { self.now() }, sleep: { try await self.sleep(for: $0) })
    }

    /// Suspends until the clock reaches now + `duration` (at once for a duration of zero or less);
    /// throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws {
        readings.add(1, ordering: .relaxed)
        try Task.checkCancellation()
        guard duration > .zero else {
            await Task.yield()
            return
        }
        let id = state.withLock { state in
            state.nextSleeper += 1
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                state.withLock { state in
                    if state.cancelled.remove(id) != nil {
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    let deadline = current(state).addingTimeInterval(duration.seconds)
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                }
            }
        } onCancel: {
            state.withLock { state in
                if let sleeper = state.sleepers.removeValue(forKey: id) {
                    sleeper.continuation.resume(throwing: CancellationError())
                } else {
                    state.cancelled.insert(id)
                }
            }
        }
        readings.add(1, ordering: .relaxed)
    }

    /// How many sleeps are under way.
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline of the sleeps under way, if any.
    var earliestDeadline: Date? {
        state.withLock { $0.sleepers.values.map(\.deadline).min() }
    }

    /// Moves the clock forward to `instant` (never back), and wakes every sleep due by then.
    func advance(to instant: Date) {
        state.withLock { state in
            if followsWallClock {
                state.offset = max(state.offset, instant.timeIntervalSince(Date()))
            } else {
                state.virtual = max(state.virtual, instant)
            }
            wakeDue(&state)
        }
    }

    /// Wakes every sleep due now (with the wall clock, real time may have brought some).
    func wakeDue() {
        state.withLock { wakeDue(&$0) }
    }

    private func wakeDue(_ state: inout State) {
        let now = current(state)
        let due = state.sleepers.filter { $0.value.deadline <= now }.sorted { $0.value.deadline < $1.value.deadline }
        for (id, sleeper) in due {
            state.sleepers[id] = nil
            sleeper.continuation.resume()
        }
    }

    /// How many readings and sleeps there have been: unchanged over a while, nothing runs.
    var activity: UInt64 { readings.load(ordering: .relaxed) }

    /// Whether a call to the store is under way.
    var callsAreInFlight: Bool { state.withLock { $0.callsInFlight > 0 } }

    /// Returns once no call to the store is under way.
    func callsFinished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state in
                guard state.callsInFlight > 0 else { return true }
                state.callWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Runs a call to the store (which may take real time, across a network), counted while it
    /// runs so the driver waits for it rather than moving the clock under it.
    func realCall<Value>(
        _ body: () async throws(AppStoreGroupsError) -> Value
    ) async throws(AppStoreGroupsError) -> Value {
        state.withLock { $0.callsInFlight += 1 }
        defer {
            readings.add(1, ordering: .relaxed)
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.callsInFlight -= 1
                guard state.callsInFlight == 0 else { return [] }
                defer { state.callWaiters.removeAll() }
                return state.callWaiters
            }
            for waiter in waiters { waiter.resume() }
        }
        return try await body()
    }
}
