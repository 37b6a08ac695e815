import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy
import Synchronization

/// The App Store of a fleet simulation: the services' `GroupsSource`, answering from the
/// ``SimulatedWorld`` with Apple's budget (429 with `Retry-After` beyond it), slow answers, dropped
/// connections and storms of 429s, and telling the ``PromiseOracle`` of every request it receives.
///
/// An answer shows the world as it was when the request arrived, however long it then takes: the
/// most an answer can lag behind a change.
final class SimulatedAppStore: GroupsSource {
    private struct State {
        var world: SimulatedWorld
        /// Requests received so far, by customer and environment: each request's fate is drawn from
        /// the seed, the customer, the environment and this count, whatever order requests for
        /// different customers arrive in.
        var received: [String: UInt64] = [:]
        var storm = false
        var slow = false
        var dropping = false
        var buckets: [StoreEnvironment: TokenBucket] = [:]
        var serial = 0
    }

    private enum Answer {
        case groups(GetCustomerGroupsResponse?, after: Duration)
        case rateLimited(retryAfter: Date)
        case dropped(after: Duration)
    }

    private let state: Mutex<State>
    private let clock: SimulationClock
    private let oracle: PromiseOracle
    private let behaviour: FleetSimulation.AppStore
    private let budget: [StoreEnvironment: (rate: Double, burst: Double)]
    private let seed: UInt64

    init(
        world: SimulatedWorld,
        seed: UInt64,
        behaviour: FleetSimulation.AppStore,
        budget: [StoreEnvironment: (rate: Double, burst: Double)],
        clock: SimulationClock,
        oracle: PromiseOracle
    ) {
        state = Mutex(State(world: world))
        self.seed = seed
        self.behaviour = behaviour
        self.budget =
            behaviour.requestsPerSecond.map { rates in rates.mapValues { (rate: $0, burst: max(1, $0)) } } ?? budget
        self.clock = clock
        self.oracle = oracle
    }

    /// The world now.
    var world: SimulatedWorld { state.withLock { $0.world } }

    /// Applies a change to the world; returns the world after it.
    func apply(_ change: SimulationStep.Change) -> SimulatedWorld {
        state.withLock { state in
            state.world.apply(change)
            return state.world
        }
    }

    /// Turns one of Apple's faults on or off.
    func set(storm: Bool? = nil, slow: Bool? = nil, dropping: Bool? = nil) {
        state.withLock { state in
            if let storm { state.storm = storm }
            if let slow { state.slow = slow }
            if let dropping { state.dropping = dropping }
        }
    }

    func customerGroups(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> GetCustomerGroupsResponse {
        let received = oracle.appleReceived(environment)
        let answer = state.withLock { state -> Answer in
            state.serial += 1
            let key = "\(anyTransactionID) \(environment.rawValue)"
            let count = state.received[key, default: 0]
            state.received[key] = count + 1
            var random = SimulationRandom(seed: seed, stream: Self.stream(key, count))
            let rateLimited = behaviour.rateLimitedShare + (state.storm ? 1.0 / 3 : 0)
            if random.chance(rateLimited) {
                return .rateLimited(retryAfter: received + random.duration(0.2...2).seconds)
            }
            let (rate, burst) = budget[environment] ?? (1, 1)
            var bucket = state.buckets[environment] ?? TokenBucket(rate: rate, burst: burst, now: received)
            let (taken, wait) = bucket.take(now: received, maximumWait: .zero)
            state.buckets[environment] = bucket
            if !taken { return .rateLimited(retryAfter: received + wait.seconds) }
            if random.chance(behaviour.droppedShare + (state.dropping ? 1.0 / 3 : 0)) {
                return .dropped(after: random.duration(0.05...1))
            }
            let delay =
                random.chance(behaviour.slowShare + (state.slow ? 0.5 : 0))
                ? random.duration(0.1...3) : .zero
            let response = state.world.index(of: anyTransactionID).flatMap {
                state.world.response(customer: $0, environment: environment, serial: state.serial)
            }
            return .groups(response, after: delay)
        }
        switch answer {
        case .rateLimited(let instant):
            throw StaticGroupsSource.tooManyRequests(retryAfter: instant)
        case .dropped(let delay):
            try await sleep(delay)
            throw AppStoreGroupsError(
                code: .transportFailure,
                message: "the simulated App Store dropped the connection",
                attempts: 1
            )
        case .groups(let response, let delay):
            try await sleep(delay)
            guard let response else {
                throw AppStoreGroupsError(
                    code: .transactionIDNotFound,
                    message: "the App Store knows no such transaction",
                    httpStatus: 404,
                    apiErrorCode: 4_040_010,
                    apiErrorMessage: "Transaction id not found.",
                    attempts: 1
                )
            }
            return response
        }
    }

    /// A stream of its own for the `count`-th request of `key` (FNV-1a of the key, then the count).
    private static func stream(_ key: String, _ count: UInt64) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash &+ count &* 0x9E37_79B9_7F4A_7C15
    }

    private func sleep(_ duration: Duration) async throws(AppStoreGroupsError) {
        guard duration > .zero else { return }
        do {
            try await clock.sleep(for: duration)
        } catch {
            throw AppStoreGroupsError(code: .cancelled, message: "cancelled while the simulated App Store answered")
        }
    }
}
