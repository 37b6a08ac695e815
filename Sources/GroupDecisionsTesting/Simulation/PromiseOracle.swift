import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy
import Synchronization

/// What a fleet simulation knows that the services do not: which invalidations have returned and
/// what they covered, every request the App Store received, and every budget lost; it judges each
/// decision served, and each request Apple receives, against the four promises as they happen.
///
/// Judgements are conservative, so a correct fleet is never reported whatever clock its store
/// keeps: an answer's age is measured from the instant its decision began (the service judged it
/// later), an answer is taken as invalidated only when it shows an older version of the customer
/// than the world had when the invalidation began, and the budget is counted in every window on
/// the simulation's clock, which never runs slower than the store's.
package final class PromiseOracle: Sendable {
    /// The newest version each completed invalidation requires, by what it covers.
    struct Coverage: Sendable {
        struct Covered: Sendable {
            var version: Int
            var step: Int
        }

        /// By customer (its own invalidations, and everyone's).
        var customers: [Int: Covered] = [:]
        /// By group, then customer: an answer holding the group.
        var groups: [String: [Int: Covered]] = [:]
        /// The step of the first invalidation of the customer begun once Apple knew them: Apple's
        /// not-found is out of date from its return on.
        var known: [Int: Int] = [:]
    }

    /// A decision under way: when it began, and what had been invalidated by then.
    struct Ticket: Sendable {
        var began: Date
        var coverage: Coverage
    }

    /// An invalidation under way: what it covers, and the world when it began.
    struct InvalidationTicket: Sendable {
        var invalidation: SimulationStep.Invalidation
        var versions: [Int]
        var known: [Bool]
        var step: Int
    }

    /// Counts of what happened, for reports.
    package struct Tally: Sendable, Hashable {
        /// Decisions served, by source (`live`, `cache`, `stale`).
        package var served: [String: Int] = [:]
        /// Decisions refused, by error code.
        package var refused: [String: Int] = [:]
        /// Requests the App Store received.
        package var appleRequests = 0
        /// Invalidations that returned, and attempts that threw.
        package var invalidations = 0
        package var failedInvalidations = 0
    }

    private struct Budget {
        var count = 0
        var minimumKey = Double.infinity
        /// The request the smallest key is the one of, and when it arrived.
        var minimumIndex = 0
        var minimumAt = 0.0
    }

    private struct State {
        var step = 0
        var stepDescription = ""
        var coverage = Coverage()
        var budgets: [StoreEnvironment: Budget] = [:]
        /// Seconds since the run began at which the budget was lost.
        var losses: [Double] = []
        var violations: [Violation] = []
        var seen: [String: Int] = [:]
        var tally = Tally()
    }

    private let seed: UInt64
    private let clock: SimulationClock
    private let start: Date
    private let names: [String]
    private let maximumAge: Double
    private let rate: [StoreEnvironment: Double]
    private let burst: [StoreEnvironment: Double]
    private let lossHorizon: Double
    private let state = Mutex(State())

    /// An oracle for one run.
    ///
    /// - Parameters:
    ///   - seed: The run's seed, which every violation names.
    ///   - clock: The run's clock.
    ///   - names: The customers' ids, by index.
    ///   - configuration: The services' configuration: the hard cap, the budget and its wait.
    ///   - budgetMultiple: How many times the configured budget the fleet may spend: 1 with a store
    ///     that keeps the fleet's budget, more for one that keeps none (each service its own) or a
    ///     fallback share.
    init(
        seed: UInt64,
        clock: SimulationClock,
        names: [String],
        configuration: GroupDecisionService.Configuration,
        budgetMultiple: Double
    ) {
        self.seed = seed
        self.clock = clock
        self.start = clock.now()
        self.names = names
        maximumAge = configuration.freshness.lifetime(of: .groups).seconds
        var rate: [StoreEnvironment: Double] = [:]
        var burst: [StoreEnvironment: Double] = [:]
        for environment in StoreEnvironment.allCases {
            let configured =
                configuration.rateLimits.requestsPerSecond[environment] ?? (environment == .production ? 50 : 5)
            rate[environment] = configured * budgetMultiple
            burst[environment] =
                (configuration.rateLimits.requestBurst[environment] ?? max(1, configured)) * budgetMultiple
        }
        self.rate = rate
        self.burst = burst
        lossHorizon = configuration.rateLimits.maximumRateLimitWait.seconds + 0.5
    }

    /// The budget each environment is judged against: rate and burst.
    func budget(_ environment: StoreEnvironment) -> (rate: Double, burst: Double) {
        (rate[environment] ?? 1, burst[environment] ?? 1)
    }

    /// The violations seen so far, at most one per promise and step (the first, with a count of the
    /// others).
    var violations: [FleetSimulation.Violation] {
        state.withLock { state in
            state.violations.map { seen in
                var violation = seen.value
                let more = state.seen[seen.key, default: 1] - 1
                if more > 0 { violation.detail += " (and \(more) more in this step)" }
                return violation
            }
        }
    }

    /// What happened so far.
    var tally: Tally { state.withLock { $0.tally } }

    private struct Violation {
        var key: String
        var value: FleetSimulation.Violation
    }

    /// Records a violation in the step under way (one per promise and step, the others counted).
    private func report(_ promise: FleetSimulation.Promise, _ detail: String, in state: inout State) {
        let key = "\(promise) \(state.step)"
        state.seen[key, default: 0] += 1
        guard state.seen[key] == 1 else { return }
        let violation = FleetSimulation.Violation(
            promise: promise,
            seed: seed,
            step: state.step,
            detail: "\(detail) [step: \(state.stepDescription)]"
        )
        state.violations.append(Violation(key: key, value: violation))
    }

    /// A step begins.
    func begin(step: Int, description: String) {
        state.withLock { state in
            state.step = step
            state.stepDescription = description
        }
    }

    // MARK: Decisions

    /// A decision begins now.
    func decisionBegins() -> Ticket {
        state.withLock { Ticket(began: clock.now(), coverage: $0.coverage) }
    }

    /// Judges a decision served to `request`.
    func served(_ decision: ServedDecision, to request: SimulationStep.Request, ticket: Ticket) {
        let customer = request.customer
        let name = names[customer]
        let asked = "service \(request.service + 1) served \(name) (\(request.environment))"
        state.withLock { state in
            state.tally.served[decision.source.name, default: 0] += 1
            let age = ticket.began.timeIntervalSince(decision.fetchedAt)
            if age > maximumAge + 0.001 {
                report(
                    .maximumAge,
                    "\(asked) an answer (\(decision.source)) fetched \(Self.seconds(age)) before the decision began, "
                        + "past the hard cap of \(Self.seconds(maximumAge))",
                    in: &state
                )
            }
            guard let marker = AnswerMarker(in: decision.groups) else {
                report(.ownAnswer, "\(asked) an answer the App Store never gave (no marker)", in: &state)
                return
            }
            guard marker.customerID == name, marker.environment == request.environment else {
                report(
                    .ownAnswer,
                    "\(asked) the answer of \(marker.customerID) (\(marker.environment)), version \(marker.version) "
                        + "(\(decision.source))",
                    in: &state
                )
                return
            }
            var required = ticket.coverage.customers[customer].map { ($0, "of \(name)") }
            for group in decision.groups.groups {
                guard let covered = ticket.coverage.groups[group.groupID]?[customer] else { continue }
                if covered.version > required?.0.version ?? 0 { required = (covered, "of group \(group.groupID)") }
            }
            if let (covered, what) = required, marker.version < covered.version {
                report(
                    .invalidation,
                    "\(asked) version \(marker.version) (\(decision.source), fetched \(Self.seconds(age)) before the "
                        + "decision began) after the invalidation \(what) of step \(covered.step) had returned, "
                        + "begun at version \(covered.version)",
                    in: &state
                )
            }
        }
    }

    /// Judges a decision refused to `request`: Apple's not-found is out of date once an invalidation
    /// begun after the customer's purchase has returned.
    func refused(_ error: AppStoreGroupsError, to request: SimulationStep.Request, ticket: Ticket) {
        state.withLock { state in
            state.tally.refused[error.code.description, default: 0] += 1
            guard error.code == .transactionIDNotFound, let step = ticket.coverage.known[request.customer] else {
                return
            }
            report(
                .invalidation,
                "service \(request.service + 1) refused \(names[request.customer]) (\(request.environment)) as not "
                    + "found after the invalidation of step \(step), begun once Apple knew them, had returned",
                in: &state
            )
        }
    }

    // MARK: Invalidations

    /// An invalidation begins, on the world as it is now.
    func invalidationBegins(_ invalidation: SimulationStep.Invalidation, world: SimulatedWorld) -> InvalidationTicket {
        let step = state.withLock { $0.step }
        return InvalidationTicket(invalidation: invalidation, versions: world.versions, known: world.known, step: step)
    }

    /// An invalidation returned: the decisions begun from now on are judged by it.
    func invalidationReturned(_ ticket: InvalidationTicket) {
        state.withLock { state in
            state.tally.invalidations += 1
            func cover(_ customer: Int, in table: inout [Int: Coverage.Covered]) {
                let version = ticket.versions[customer]
                if version > table[customer]?.version ?? 0 {
                    table[customer] = Coverage.Covered(version: version, step: ticket.step)
                }
            }
            switch ticket.invalidation {
            case .customer(let customer):
                cover(customer, in: &state.coverage.customers)
                if ticket.known[customer], state.coverage.known[customer] == nil {
                    state.coverage.known[customer] = ticket.step
                }
            case .all:
                for customer in ticket.versions.indices {
                    cover(customer, in: &state.coverage.customers)
                    if ticket.known[customer], state.coverage.known[customer] == nil {
                        state.coverage.known[customer] = ticket.step
                    }
                }
            case .group(let group):
                var table = state.coverage.groups[group] ?? [:]
                for customer in ticket.versions.indices { cover(customer, in: &table) }
                state.coverage.groups[group] = table
            }
        }
    }

    /// An invalidation attempt threw (it is tried again through another service, or later).
    func invalidationFailed() {
        state.withLock { $0.tally.failedInvalidations += 1 }
    }

    // MARK: The budget

    /// The budget's key was lost (flushed, evicted, restarted): one more burst is allowed.
    func budgetLost() {
        state.withLock { state in state.losses.append(clock.now().timeIntervalSince(start)) }
    }

    /// The App Store received a request for `environment`: counted in every window that ends now;
    /// returns the instant it arrived.
    func appleReceived(_ environment: StoreEnvironment) -> Date {
        state.withLock { state in
            let now = clock.now()
            state.tally.appleRequests += 1
            let time = now.timeIntervalSince(start)
            let (rate, burst) = budget(environment)
            var budget = state.budgets[environment] ?? Budget()
            // count(i...j) <= burst + rate (t_j - t_i) + burst * losses in [t_i - horizon, t_j] + 1, for
            // every earlier request i: kept as the smallest key of the requests so far.
            let lossesBefore = Double(state.losses.filter { $0 < time - lossHorizon }.count)
            let key = Double(budget.count) - rate * time - burst * lossesBefore
            if key < budget.minimumKey {
                budget.minimumKey = key
                budget.minimumIndex = budget.count
                budget.minimumAt = time
            }
            budget.count += 1
            let lossesSoFar = Double(state.losses.filter { $0 <= time }.count)
            let value = Double(budget.count) - rate * time - burst * lossesSoFar
            if value > burst + 1 + budget.minimumKey + 1e-9 {
                let window = time - budget.minimumAt
                let losses = state.losses.filter { $0 >= budget.minimumAt - lossHorizon && $0 <= time }.count
                let allowed = burst + rate * window + burst * Double(losses) + 1
                let received = budget.count - budget.minimumIndex
                report(
                    .budget,
                    "the App Store received \(received) \(environment) requests in \(Self.seconds(window)) (from "
                        + "\(Self.seconds(budget.minimumAt)) into the run), more than the \(Self.format(allowed)) allowed: "
                        + "a burst of \(Self.format(burst)), \(Self.format(rate)) a second, \(losses) budget "
                        + "losses, and 1 for rounding",
                    in: &state
                )
                // Judged from the next request on: the same excess is not reported again by every
                // longer window that holds it.
                budget.minimumKey = .infinity
            }
            state.budgets[environment] = budget
            return now
        }
    }

    static func seconds(_ seconds: Double) -> String { "\(format(seconds)) s" }

    static func format(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
