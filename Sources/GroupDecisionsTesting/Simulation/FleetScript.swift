import AppStoreGroups
import GroupPolicy

/// The steps of a run, drawn one at a time from the seed and the App Store's world (which only the
/// script's own changes move): the same seed gives the same steps.
struct FleetScript: Sendable {
    private var random: SimulationRandom
    private let services: Int
    private let faults: Set<FleetSimulation.Fault>
    /// The services the script has given a fault, not yet healed.
    private var faulted: Set<Int> = []
    private var storm = false
    private var slow = false
    private var dropping = false
    /// Steps drawn with the one before them, played next.
    private var queued: [SimulationStep] = []

    /// A script for `services` services that injects only `faults`.
    init(seed: UInt64, services: Int, faults: Set<FleetSimulation.Fault>) {
        random = SimulationRandom(seed: seed, stream: 1)
        self.services = services
        self.faults = faults
    }

    /// The next step.
    mutating func next(_ world: SimulatedWorld) -> SimulationStep {
        if !queued.isEmpty { return queued.removeFirst() }
        let draw = Double.random(in: 0..<1, using: &random)
        if draw < 0.15, let fault = nextFault(world) {
            switch fault {
            case .flush, .restart, .loseBudget:
                // A lost budget costs most while callers wait on tokens of the bucket lost: everyone is
                // fetched again, half the sandbox's customers ask at once (the burst spent, the next
                // tokens reserved), the budget is lost, and the other half ask.
                let customers = Array(0..<world.count).shuffled(using: &random)
                let half = customers.count / 2
                let sandbox = { (customer: Int) in
                    SimulationStep.Request(
                        service: Int.random(in: 0..<services, using: &random),
                        customer: customer,
                        environment: .sandbox
                    )
                }
                queued = [
                    .fault(fault, before: customers[..<half].map(sandbox), after: customers[half...].map(sandbox))
                ]
                return .invalidation(.all, through: Int.random(in: 0..<services, using: &random))
            case .loseInvalidationCount:
                // A lost count matters when it is lost again after an invalidation: every service
                // keeps a copy of one customer stamped with the count read after the first loss, the
                // customer changes and is invalidated through one service, the count is lost again,
                // and every service is asked for the customer.
                let customer = Int.random(in: 0..<world.count, using: &random)
                let everywhere = (0..<services).map {
                    SimulationStep.Request(service: $0, customer: customer, environment: .production)
                }
                let (change, _) = pickChange(world, customer: customer)
                queued = [
                    .requests(everywhere),
                    .change(
                        change,
                        .customer(customer),
                        through: Int.random(in: 0..<services, using: &random),
                        during: [],
                        after: []
                    ),
                    .fault(fault, before: [], after: []), .requests(everywhere),
                ]
                return .fault(fault, before: [], after: [])
            default:
                return .fault(fault, before: [], after: [])
            }
        }
        if draw < 0.40 { return change(world) }
        if draw < 0.65 { return .pause(pause()) }
        return .requests(requests(world, count: Int.random(in: 1...6, using: &random), favouring: []))
    }

    private mutating func pause() -> Duration {
        let kind = Double.random(in: 0..<1, using: &random)
        if kind < 0.4 { return random.duration(0.01...0.3) }
        if kind < 0.75 { return random.duration(0.3...2) }
        if kind < 0.95 { return random.duration(2...6) }
        return random.duration(6...15)
    }

    /// Decisions for random customers (half of them among `favoured`, when given) on random
    /// services, three in four in production.
    private mutating func requests(
        _ world: SimulatedWorld,
        count: Int,
        favouring favoured: [Int]
    ) -> [SimulationStep.Request] {
        (0..<count).map { _ in
            let customer =
                !favoured.isEmpty && random.chance(0.5)
                ? favoured.randomElement(using: &random) ?? 0
                : Int.random(in: 0..<world.count, using: &random)
            return SimulationStep.Request(
                service: Int.random(in: 0..<services, using: &random),
                customer: customer,
                environment: random.chance(0.75) ? .production : .sandbox
            )
        }
    }

    private mutating func change(_ world: SimulatedWorld) -> SimulationStep {
        let (change, affected) = pickChange(world)
        let invalidation: SimulationStep.Invalidation
        let draw = Double.random(in: 0..<1, using: &random)
        switch change {
        case .join(let customer, _, _), .purchase(let customer, _, _):
            // An answer from before the change does not hold the team: only the customer's or
            // everyone's invalidation removes it.
            invalidation = draw < 0.85 ? .customer(customer) : .all
        case .changeRole(let customer, let team, _), .leave(let customer, let team):
            invalidation = draw < 0.55 ? .customer(customer) : draw < 0.9 ? .group(team) : .all
        case .revokeTeam(let team):
            invalidation = draw < 0.8 ? .group(team) : .all
        }
        return .change(
            change,
            invalidation,
            through: Int.random(in: 0..<services, using: &random),
            during: requests(world, count: Int.random(in: 0...4, using: &random), favouring: affected),
            after: requests(world, count: Int.random(in: 1...4, using: &random), favouring: affected)
        )
    }

    /// A change the world allows (to `customer`'s groups when given), and the customers it changes.
    private mutating func pickChange(
        _ world: SimulatedWorld,
        customer chosen: Int? = nil
    ) -> (SimulationStep.Change, [Int]) {
        let role: Role = random.chance(0.3) ? .admin : .unassigned
        let team = world.teams.randomElement(using: &random) ?? "team1"
        let unknown = (0..<world.count).filter { !world[$0].known }
        let known = (0..<world.count).filter { world[$0].known }
        let draw = Double.random(in: 0..<1, using: &random)
        if let chosen, !world[chosen].known {
            return (.purchase(customer: chosen, team: team, role: role), [chosen])
        }
        if chosen == nil, draw < 0.1, let customer = unknown.randomElement(using: &random) {
            return (.purchase(customer: customer, team: team, role: role), [customer])
        }
        if chosen == nil, draw < 0.25 {
            let members = (0..<world.count).filter { world[$0].teams[team] != nil }
            if !members.isEmpty { return (.revokeTeam(team), members) }
        }
        guard let customer = chosen ?? known.randomElement(using: &random) else {
            let customer = unknown.randomElement(using: &random) ?? 0
            return (.purchase(customer: customer, team: team, role: role), [customer])
        }
        let held = world[customer].teams.keys.sorted()
        if draw < 0.5 || held.isEmpty {
            let free = world.teams.filter { world[customer].teams[$0] == nil }
            if let joined = free.randomElement(using: &random) {
                return (.join(customer: customer, team: joined, role: role), [customer])
            }
        }
        let seat = held.randomElement(using: &random) ?? team
        if draw < 0.75 {
            let other: Role = world[customer].teams[seat] == .admin ? .unassigned : .admin
            return (.changeRole(customer: customer, team: seat, role: other), [customer])
        }
        return (.leave(customer: customer, team: seat), [customer])
    }

    /// A fault to turn on or off, among those allowed, or `nil` when none applies.
    private mutating func nextFault(_ world: SimulatedWorld) -> SimulationStep.Fault? {
        var choices: [SimulationStep.Fault] = []
        let service = Int.random(in: 0..<services, using: &random)
        if faulted.contains(service) {
            choices += [.heal(service: service), .heal(service: service)]
        } else if faulted.count + 1 < services {
            // At least one service always reaches the store, so invalidations can complete.
            if faults.contains(.cutOff) { choices.append(.cutOff(service: service, timesOut: random.chance(0.5))) }
            if faults.contains(.slowCache) { choices.append(.slowCache(service: service)) }
            if faults.contains(.flappingCache) { choices.append(.flappingCache(service: service)) }
        }
        if faults.contains(.flush) { choices.append(.flush) }
        if faults.contains(.restart) { choices.append(.restart) }
        if faults.contains(.evictedKey) {
            choices += [
                .loseBudget, .loseInvalidationCount,
                .loseAnswer(
                    customer: Int.random(in: 0..<world.count, using: &random),
                    environment: random.chance(0.75) ? .production : .sandbox
                ),
            ]
        }
        if faults.contains(.rateLimitStorm) { choices.append(.rateLimitStorm(!storm)) }
        if faults.contains(.slowAnswers) { choices.append(.slowAnswers(!slow)) }
        if faults.contains(.droppedAnswers) { choices.append(.droppedAnswers(!dropping)) }
        guard let fault = choices.randomElement(using: &random) else { return nil }
        switch fault {
        case .cutOff(let service, _), .slowCache(let service), .flappingCache(let service): faulted.insert(service)
        case .heal(let service): faulted.remove(service)
        case .rateLimitStorm(let on): storm = on
        case .slowAnswers(let on): slow = on
        case .droppedAnswers(let on): dropping = on
        default: break
        }
        return fault
    }
}
