import AppStoreGroups
import Foundation
import GroupPolicy
import GroupPolicyBasics

/// One fetch in flight per customer and environment: concurrent callers share it.
///
/// An invalidation overtakes the flights under way whose answers it concerns: those answers predate
/// it, so they answer the callers already waiting and are kept nowhere (their ``FlightTicket`` says
/// so), and callers from then on start a flight of their own. A group's invalidation concerns only
/// the answers that hold the group, which a flight's ticket can tell only once it has answered.
///
/// An invalidation through another process reaches this one only through the shared cache's count,
/// so a flight's answer may predate one that has already returned: callers learn when the flight
/// they joined began (``runReportingStart(_:joiningFlightsSince:_:)``), and a caller that must not
/// take such an answer starts a flight of its own, joining only flights begun after a given instant.
final class SingleFlight<Value: Sendable>: Sendable {
    private struct Flight {
        var task: Task<Value, any Error>
        var ticket: FlightTicket
        var started: Date
    }

    private struct State {
        var flights: [CustomerKey: Flight] = [:]
        /// The flights taken out of `flights` while they run, by ticket.
        ///
        /// A group's invalidation takes them out, and so does a newer flight that replaces one too
        /// old to join: the invalidations after that must reach them too. A flight's leader forgets
        /// it in ``end(_:ticket:)``.
        var detached: [ObjectIdentifier: (key: CustomerKey, ticket: FlightTicket)] = [:]
    }

    private let state = Locked(State())
    private let now: @Sendable () -> Date

    init(now: @escaping @Sendable () -> Date = { Date() }) {
        self.now = now
    }

    /// The flight's value: this caller's own flight, or the one already under way for `key` if it
    /// began at or after `earliest` (`nil`: whenever it began).
    ///
    /// `body` runs in a task of its own (so one caller's cancellation does not fail the others), with
    /// its ticket as ``FlightTicket/current``. A flight too old to join keeps answering the callers
    /// that joined it, and the invalidations after that still overtake it; this caller's own takes
    /// its place for the callers after it.
    func run(
        _ key: CustomerKey,
        joiningFlightsSince earliest: Date? = nil,
        _ body: @escaping @Sendable () async throws(AppStoreGroupsError) -> Value
    ) async throws(AppStoreGroupsError) -> Value {
        try await runReportingStart(key, joiningFlightsSince: earliest, body).value
    }

    /// ``run(_:joiningFlightsSince:_:)``, with the instant the flight that answered began.
    func runReportingStart(
        _ key: CustomerKey,
        joiningFlightsSince earliest: Date? = nil,
        _ body: @escaping @Sendable () async throws(AppStoreGroupsError) -> Value
    ) async throws(AppStoreGroupsError) -> (value: Value, started: Date) {
        let started = now()
        let (task, ticket, flightStarted, isLeader) = state.withLock { state in
            if let flight = state.flights[key] {
                if earliest.map({ flight.started >= $0 }) ?? true {
                    return (flight.task, flight.ticket, flight.started, false)
                }
                // Replaced while it runs: the invalidations from now on must still reach it.
                state.detached[ObjectIdentifier(flight.ticket)] = (key, flight.ticket)
            }
            let flight = Self.start(body, at: started)
            state.flights[key] = flight
            return (flight.task, flight.ticket, started, true)
        }
        let result = await task.result
        if isLeader { end(key, ticket: ticket) }
        switch result {
        case .success(let value):
            return (value, flightStarted)
        case .failure(let error as AppStoreGroupsError):
            throw error
        case .failure(let error):
            throw AppStoreGroupsError(code: .transportFailure, message: "the fetch failed: \(error)")
        }
    }

    /// Starts a flight for `key` only when none is under way: its task, to be awaited and then
    /// ended with ``end(_:task:)``, or `nil` when a flight is already under way.
    ///
    /// For a background refresh: callers arriving meanwhile join it as they join any flight.
    func startIfIdle(
        _ key: CustomerKey,
        _ body: @escaping @Sendable () async throws(AppStoreGroupsError) -> Value
    ) -> (task: Task<Value, any Error>, ticket: FlightTicket)? {
        state.withLock { state in
            guard state.flights[key] == nil else { return nil }
            let flight = Self.start(body, at: now())
            state.flights[key] = flight
            return (flight.task, flight.ticket)
        }
    }

    /// A new flight running `body` in a task of its own, with its ticket as ``FlightTicket/current``.
    private static func start(
        _ body: @escaping @Sendable () async throws(AppStoreGroupsError) -> Value,
        at started: Date
    ) -> Flight {
        let ticket = FlightTicket()
        let task = Task { () async throws -> Value in
            try await FlightTicket.$current.withValue(ticket) { () async throws -> Value in try await body() }
        }
        return Flight(task: task, ticket: ticket, started: started)
    }

    /// Forgets a flight started by ``startIfIdle(_:_:)`` once it ended, unless an invalidation
    /// already put a newer one in its place.
    func end(_ key: CustomerKey, ticket: FlightTicket) {
        state.withLock { state in
            // Only its own flight: an invalidation may have put a newer one in its place.
            if state.flights[key]?.ticket === ticket { state.flights[key] = nil }
            state.detached[ObjectIdentifier(ticket)] = nil
        }
    }

    /// Marks the customer's flights, in every environment, as overtaken.
    func invalidate(customerID: String) {
        state.withLock { state in
            for environment in StoreEnvironment.allCases {
                let key = CustomerKey(environment: environment, customerID: customerID)
                state.flights.removeValue(forKey: key)?.ticket.invalidate()
            }
            for flight in state.detached.values where flight.key.customerID == customerID { flight.ticket.invalidate() }
        }
    }

    /// Marks every flight as overtaken.
    func invalidateAll() {
        state.withLock { state in
            for flight in state.flights.values { flight.ticket.invalidate() }
            for flight in state.detached.values { flight.ticket.invalidate() }
            state.flights.removeAll()
        }
    }

    /// Marks every flight as overtaken for an answer that holds the group: callers from then on start
    /// a flight of their own, and an answer without the group is kept as usual.
    func invalidate(groupID: String) {
        state.withLock { state in
            for flight in state.detached.values { flight.ticket.invalidate(groupID: groupID) }
            for (key, flight) in state.flights {
                flight.ticket.invalidate(groupID: groupID)
                state.detached[ObjectIdentifier(flight.ticket)] = (key, flight.ticket)
            }
            state.flights.removeAll()
        }
    }
}

/// Marks a flight that an invalidation overtook: its answer predates the invalidation.
final class FlightTicket: Sendable {
    /// The ticket of the flight the current task runs, read where answers are kept.
    @TaskLocal static var current: FlightTicket?

    private struct Overtaken {
        /// By an invalidation of the customer or of everyone: whatever the answer holds.
        var entirely = false
        /// By invalidations of these groups: an answer holding one of them.
        var groupIDs: [String] = []
    }

    private let overtaken = Locked(Overtaken())

    /// Whether an invalidation overtook the flight for `answer`: any invalidation of the customer or
    /// of everyone; a group's when the answer holds the group, or when its groups are not known.
    func overtakes(_ answer: CachedGroupsAnswer, decoded: GetCustomerGroupsResponse?) -> Bool {
        overtaken.withLock { overtaken in
            if overtaken.entirely { return true }
            if overtaken.groupIDs.isEmpty || answer.kind == .notFound { return false }
            guard let decoded else { return true }
            // Byte for byte, as the shared cache's index compares group ids.
            return decoded.groups.contains { group in
                overtaken.groupIDs.contains { Array($0.utf8) == Array(group.groupID.utf8) }
            }
        }
    }

    func invalidate() { overtaken.withLock { $0.entirely = true } }

    func invalidate(groupID: String) { overtaken.withLock { $0.groupIDs.append(groupID) } }

    /// Whether the current task's flight, if any, was overtaken for `answer`.
    static func currentOvertakes(_ answer: CachedGroupsAnswer, decoded: GetCustomerGroupsResponse?) -> Bool {
        current?.overtakes(answer, decoded: decoded) == true
    }
}
