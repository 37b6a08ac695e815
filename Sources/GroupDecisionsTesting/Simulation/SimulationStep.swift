import AppStoreGroups
import GroupPolicy
import GroupPolicyBasics

/// One step of a fleet simulation's script, drawn from the seed (see ``FleetScript``).
enum SimulationStep: Sendable {
    /// A decision asked of one service.
    struct Request: Sendable {
        var service: Int
        var customer: Int
        var environment: StoreEnvironment
    }

    /// A change at the App Store to one customer's groups, or to a team's.
    enum Change: Sendable {
        case join(customer: Int, team: String, role: Role)
        case changeRole(customer: Int, team: String, role: Role)
        /// A revocation: the customer's seat taken back.
        case leave(customer: Int, team: String)
        /// A customer Apple did not know buys a seat.
        case purchase(customer: Int, team: String, role: Role)
        /// The team's purchase refunded or expired: every member loses it.
        case revokeTeam(String)
    }

    /// The app's invalidation after a change.
    enum Invalidation: Sendable, Hashable {
        case customer(Int)
        case group(String)
        case all
    }

    /// A fault turned on or off.
    enum Fault: Sendable {
        case cutOff(service: Int, timesOut: Bool)
        case slowCache(service: Int)
        case flappingCache(service: Int)
        case heal(service: Int)
        case flush
        case loseBudget
        case loseInvalidationCount
        case loseAnswer(customer: Int, environment: StoreEnvironment)
        case restart
        case rateLimitStorm(Bool)
        case slowAnswers(Bool)
        case droppedAnswers(Bool)
    }

    /// Decisions asked at once.
    case requests([Request])
    /// A change, then the app's invalidation through one service, with decisions asked while it
    /// runs and once it has returned.
    case change(Change, Invalidation, through: Int, during: [Request], after: [Request])
    /// An invalidation with no change behind it (a policy or product change: everyone's answers
    /// are fetched again).
    case invalidation(Invalidation, through: Int)
    /// The clock moves on.
    case pause(Duration)
    /// A fault turned on or off; a store's loss strikes while decisions wait for the budget, with
    /// more decisions after it.
    case fault(Fault, before: [Request], after: [Request])

    /// What the step does, naming customers by id.
    func description(_ names: [String]) -> String {
        switch self {
        case .requests(let requests):
            return "\(requests.count) decisions"
        case .change(let change, let invalidation, let service, let during, let after):
            return "\(change.description(names)), then the invalidation of \(invalidation.description(names)) "
                + "through service \(service + 1), with \(during.count) decisions during it and \(after.count) after"
        case .invalidation(let invalidation, let service):
            return "the invalidation of \(invalidation.description(names)) through service \(service + 1), no change"
        case .pause(let duration):
            return "\(Int((duration.seconds * 1000).rounded())) ms pass"
        case .fault(let fault, let before, let after):
            guard !before.isEmpty || !after.isEmpty else { return fault.description(names) }
            return "\(fault.description(names)) while \(before.count) decisions run, then \(after.count) more"

        }
    }
}

extension SimulationStep.Change {
    func description(_ names: [String]) -> String {
        switch self {
        case .join(let customer, let team, let role): "\(names[customer]) joins \(team) as \(role.rawValue)"
        case .changeRole(let customer, let team, let role): "\(names[customer]) becomes \(role.rawValue) in \(team)"
        case .leave(let customer, let team): "\(names[customer])'s seat in \(team) revoked"
        case .purchase(let customer, let team, let role):
            "\(names[customer]) buys a seat in \(team) as \(role.rawValue)"
        case .revokeTeam(let team): "\(team) revoked for every member"
        }
    }
}

extension SimulationStep.Invalidation {
    func description(_ names: [String]) -> String {
        switch self {
        case .customer(let customer): "\(names[customer])"
        case .group(let team): "group \(team)"
        case .all: "everyone"
        }
    }
}

extension SimulationStep.Fault {
    func description(_ names: [String]) -> String {
        switch self {
        case .cutOff(let service, let timesOut):
            "service \(service + 1) cut off from the store" + (timesOut ? " (calls time out)" : "")
        case .slowCache(let service): "service \(service + 1)'s store calls slow"
        case .flappingCache(let service): "service \(service + 1)'s store calls flapping"
        case .heal(let service): "service \(service + 1) reaches the store again"
        case .flush: "the store flushed"
        case .loseBudget: "the budget's key evicted"
        case .loseInvalidationCount: "the invalidation count's key evicted"
        case .loseAnswer(let customer, let environment): "\(names[customer])'s \(environment) answer evicted"
        case .restart: "the store restarted"
        case .rateLimitStorm(let on): on ? "Apple storms 429s" : "Apple's storm ends"
        case .slowAnswers(let on): on ? "Apple answers slowly" : "Apple answers promptly again"
        case .droppedAnswers(let on): on ? "Apple drops connections" : "Apple stops dropping connections"
        }
    }
}
