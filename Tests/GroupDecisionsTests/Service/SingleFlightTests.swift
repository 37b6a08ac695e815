import Foundation
import GroupDecisionsTesting
import GroupPolicy
import GroupPolicyBasics
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// One flight per customer and environment, and invalidations that overtake flights under way.
@Suite("Single flight")
struct SingleFlightTests {
    static let key = CustomerKey(environment: .sandbox, customerID: "c1")
    /// The gate each test's first flight waits at, and how many runs its bodies made.
    let gate = Gate()
    let runs = Locked(0)

    /// A flight's body that counts its runs in `runs`, waits for `gate`, and answers its run's number.
    func counted(_ gate: Gate) -> @Sendable (ServingPermit) async throws(AppStoreGroupsError) -> Int {
        { [runs] _ in
            let run = runs.withLock { runs in
                runs += 1
                return runs
            }
            await gate.wait()
            return run
        }
    }

    @Test("concurrent callers for one key share one run of the body; another key or environment has its own")
    func sharesOneRun() async throws {
        let flights = SingleFlight<Int>()
        let callers = Locked(0)
        let values = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    callers.withLock { $0 += 1 }
                    return try await flights.run(Self.key, counted(gate))
                }
            }
            // Every caller has joined (one joins without suspending once counted) by the time the body may end.
            try await waitUntil { callers.withLock { $0 } == 20 }
            try await Task.sleep(for: .milliseconds(100))
            gate.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(values == Array(repeating: 1, count: 20))
        let other = try await flights.run(CustomerKey(environment: .production, customerID: "c1")) {
            (_: ServingPermit) throws(AppStoreGroupsError) in 7
        }
        #expect(other == 7)
        #expect(runs.withLock { $0 } == 1)
    }

    @Test(
        "a caller joins only a flight begun at or after the instant it names; a later one takes the older one's place"
    )
    func joinsOnlyRecentFlights() async throws {
        let clock = ManualClock()
        let flights = SingleFlight<Int>(now: clock.now)
        let begun = clock.date
        let body = counted(gate)
        // The callers that are to join count themselves first: on a busy machine a task may start
        // later than any fixed wait, and one that came after the flight ended started its own. A
        // caller joins without suspending once it has counted itself; the sleeps cover that step.
        let callers = Locked(0)
        // Named an instant at the flight's start, a second later: joins it.
        let first = Task { try await flights.run(Self.key, body) }
        while runs.withLock({ $0 }) < 1 { await Task.yield() }
        clock.advance(by: .seconds(1))
        let joined = Task {
            callers.withLock { $0 += 1 }
            return try await flights.run(Self.key, joiningFlightsSince: begun, body)
        }
        try await waitUntil { callers.withLock { $0 } == 1 }
        try await Task.sleep(for: .milliseconds(100))
        gate.open()
        #expect(try await first.value == 1)
        #expect(try await joined.value == 1)
        // Named an instant after the flight's start: a flight of its own, which the callers after it join.
        let other = CustomerKey(environment: .sandbox, customerID: "c2")
        let secondGate = Gate()
        let gated = counted(secondGate)
        let second = clock.date
        let old = Task { try await flights.run(other, gated) }
        while runs.withLock({ $0 }) < 2 { await Task.yield() }
        clock.advance(by: .seconds(1))
        let own = Task { try await flights.run(other, joiningFlightsSince: second.addingTimeInterval(0.5), gated) }
        while runs.withLock({ $0 }) < 3 { await Task.yield() }
        let late = Task {
            callers.withLock { $0 += 1 }
            return try await flights.run(other, joiningFlightsSince: second.addingTimeInterval(0.5), gated)
        }
        try await waitUntil { callers.withLock { $0 } == 2 }
        try await Task.sleep(for: .milliseconds(100))
        secondGate.open()
        #expect(try await old.value == 2)
        #expect(try await own.value == 3)
        #expect(try await late.value == 3)
        #expect(runs.withLock { $0 } == 3)
    }

    @Test("an invalidation marks the flight under way, and the next caller starts a new one")
    func invalidationOvertakes() async throws {
        let flights = SingleFlight<ServingPermit>()
        let first = await heldFlight(flights)
        flights.invalidate(customerID: "c1")
        let second = try await flights.run(Self.key) { (permit: ServingPermit) throws(AppStoreGroupsError) in permit }
        #expect(second.clears(Self.answer, decoded: nil))
        gate.open()
        #expect(try await !first.value.clears(Self.answer, decoded: nil))
    }

    /// A flight for ``key`` under way, held at ``gate``, that answers its permit.
    func heldFlight(_ flights: SingleFlight<ServingPermit>) async -> Task<ServingPermit, any Error> {
        let started = Locked(false)
        let flight = Task {
            try await flights.run(Self.key) { (permit: ServingPermit) throws(AppStoreGroupsError) in
                started.withLock { $0 = true }
                await gate.wait()
                return permit
            }
        }
        while !started.withLock({ $0 }) { await Task.yield() }
        return flight
    }

    static let answer = CachedGroupsAnswer(kind: .groups, body: [], fetchedAt: Date(timeIntervalSince1970: 0))

    /// An answer holding the groups, as the permit sees it.
    static func holding(_ groupIDs: [String]) -> GetCustomerGroupsResponse {
        GetCustomerGroupsResponse(groups: groupIDs.map { GroupEntry(groupID: $0, groupType: .consumer) })
    }

    @Test("a group's invalidation overtakes a flight only for an answer holding the group")
    func groupInvalidationOvertakesOnlyItsMembers() async throws {
        let flights = SingleFlight<ServingPermit>()
        let first = await heldFlight(flights)
        flights.invalidate(groupID: "g1")
        gate.open()
        let permit = try await first.value
        #expect(!permit.clears(Self.answer, decoded: Self.holding(["g2", "g1"])))
        #expect(permit.clears(Self.answer, decoded: Self.holding(["g2"])))
        #expect(permit.clears(Self.answer, decoded: Self.holding([])))
        let notFound = CachedGroupsAnswer(kind: .notFound, body: [], fetchedAt: Date(timeIntervalSince1970: 0))
        #expect(permit.clears(notFound, decoded: nil))
        // Groups not known: overtaken, to be safe.
        #expect(!permit.clears(Self.answer, decoded: nil))
        // Compared byte for byte, as the shared cache's index does: the Kelvin sign is canonically
        // equivalent to K (Swift's == says equal), yet another group.
        permit.invalidate(groupID: "K1")
        #expect(permit.clears(Self.answer, decoded: Self.holding(["\u{212A}1"])))
        #expect(!permit.clears(Self.answer, decoded: Self.holding(["K1"])))
        // A later invalidation of the customer overtakes whatever the answer holds.
        permit.invalidate()
        #expect(!permit.clears(Self.answer, decoded: Self.holding(["g2"])))
    }
}
