import AppStoreGroups
import Foundation
import GroupPolicy
import GroupPolicyBasics

/// One fetch in flight per customer and environment: concurrent callers share it.
///
/// An invalidation overtakes the flights under way whose answers it concerns (their
/// ``ServingPermit`` says so), and callers from then on start a flight of their own. A caller that
/// must not take an answer that may predate another process's invalidation joins only flights
/// begun after a given instant (``runReportingPermit(_:joiningFlightsSince:notJoining:_:)``).
final class SingleFlight<Value: Sendable>: Sendable {
    private struct Flight {
        var task: Task<Value, any Error>
        var permit: ServingPermit
    }

    private struct State {
        var flights: [CustomerKey: Flight] = [:]
        /// The flights taken out of `flights` while they run (by a group's invalidation, or a newer
        /// flight in place of one too old to join), by permit, so later invalidations reach them;
        /// forgotten in ``end(_:permit:)``.
        var detached: [ObjectIdentifier: (key: CustomerKey, permit: ServingPermit)] = [:]
    }

    private let state = Locked(State())
    private let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    /// The flight's value: this caller's own flight, or the one already under way for `key` if it
    /// began at or after `earliest` (`nil`: whenever it began).
    ///
    /// `body` runs in a task of its own (one caller's cancellation fails no other), given the
    /// flight's ``ServingPermit``. A flight too old to join keeps answering its callers, still
    /// within reach of invalidations, while this caller's takes its place.
    func run(
        _ key: CustomerKey,
        joiningFlightsSince earliest: Date? = nil,
        _ body: @escaping @Sendable (ServingPermit) async throws(AppStoreGroupsError) -> Value
    ) async throws(AppStoreGroupsError) -> Value {
        try await runReportingPermit(key, joiningFlightsSince: earliest, body).result.get()
    }

    /// ``run(_:joiningFlightsSince:_:)``, as a result, with the permit of the flight that answered,
    /// by which a caller judges when it began; a flight that ended without an answer is named as
    /// `excluded`, so as not to be joined again while it ends.
    func runReportingPermit(
        _ key: CustomerKey,
        joiningFlightsSince earliest: Date? = nil,
        notJoining excluded: ServingPermit? = nil,
        _ body: @escaping @Sendable (ServingPermit) async throws(AppStoreGroupsError) -> Value
    ) async -> (result: Result<Value, AppStoreGroupsError>, permit: ServingPermit) {
        let started = now()
        let (task, permit, isLeader) = state.withLock { state in
            if let flight = state.flights[key] {
                if flight.permit !== excluded, earliest.map({ flight.permit.began >= $0 }) ?? true {
                    return (flight.task, flight.permit, false)
                }
                // Replaced while it runs: the invalidations from now on must still reach it.
                state.detached[ObjectIdentifier(flight.permit)] = (key, flight.permit)
            }
            let flight = Self.start(body, at: started)
            state.flights[key] = flight
            return (flight.task, flight.permit, true)
        }
        let result = await task.result.mapError { error in
            error as? AppStoreGroupsError
                ?? AppStoreGroupsError(code: .transportFailure, message: "the fetch failed: \(error)")
        }
        if isLeader { end(key, permit: permit) }
        return (result, permit)
    }

    /// Starts a flight (a refresh ahead, which callers join as any flight) for `key` only when none
    /// is under way: its task, to be awaited and then ended with ``end(_:permit:)``, or `nil`.
    func startIfIdle(
        _ key: CustomerKey,
        _ body: @escaping @Sendable (ServingPermit) async throws(AppStoreGroupsError) -> Value
    ) -> (task: Task<Value, any Error>, permit: ServingPermit)? {
        state.withLock { state in
            guard state.flights[key] == nil else { return nil }
            let flight = Self.start(body, at: now())
            state.flights[key] = flight
            return (flight.task, flight.permit)
        }
    }

    /// A new flight running `body` in a task of its own, given the flight's permit.
    private static func start(
        _ body: @escaping @Sendable (ServingPermit) async throws(AppStoreGroupsError) -> Value,
        at started: Date
    ) -> Flight {
        let permit = ServingPermit(began: started)
        let task = Task { () async throws -> Value in try await body(permit) }
        return Flight(task: task, permit: permit)
    }

    /// Forgets a flight started by ``startIfIdle(_:_:)`` once it ended, unless an invalidation
    /// already put a newer one in its place.
    func end(_ key: CustomerKey, permit: ServingPermit) {
        state.withLock { state in
            // Only its own flight: an invalidation may have put a newer one in its place.
            if state.flights[key]?.permit === permit { state.flights[key] = nil }
            state.detached[ObjectIdentifier(permit)] = nil
        }
    }

    /// Marks the customer's flights, in every environment, as overtaken.
    func invalidate(customerID: String) {
        state.withLock { state in
            for environment in StoreEnvironment.allCases {
                let key = CustomerKey(environment: environment, customerID: customerID)
                state.flights.removeValue(forKey: key)?.permit.invalidate()
            }
            for flight in state.detached.values where flight.key.customerID == customerID { flight.permit.invalidate() }
        }
    }

    /// Marks every flight as overtaken.
    func invalidateAll() {
        state.withLock { state in
            for flight in state.flights.values { flight.permit.invalidate() }
            for flight in state.detached.values { flight.permit.invalidate() }
            state.flights.removeAll()
        }
    }

    /// Marks every flight as overtaken for an answer that holds the group: callers from then on start
    /// a flight of their own, and an answer without the group is kept as usual.
    func invalidate(groupID: String) {
        state.withLock { state in
            for flight in state.detached.values { flight.permit.invalidate(groupID: groupID) }
            for (key, flight) in state.flights {
                flight.permit.invalidate(groupID: groupID)
                state.detached[ObjectIdentifier(flight.permit)] = (key, flight.permit)
            }
            state.flights.removeAll()
        }
    }
}
