import AppStoreGroups
import GroupPolicy

/// What the simulated App Store knows: each customer's groups and roles, and a version per customer
/// that every change to them raises.
///
/// Every answer carries a marker group, `m_<customer>_<environment>_<version>_<serial>`, so a
/// decision served reveals whose answer it is, for which environment, and which version of the
/// customer it shows (see ``AnswerMarker``). Customer ids come in pairs that differ only in case
/// (`admin1` and `ADMIN1`), so a store that folds case serves one the other's answer.
struct SimulatedWorld: Sendable {
    struct Customer: Sendable {
        let id: String
        /// Whether Apple knows the customer (a purchase makes it so); otherwise it answers not found.
        var known: Bool
        /// Raised by every change to the customer's groups, a purchase included.
        var version: Int
        /// The teams the customer holds a seat in, and the role of the seat.
        var teams: [String: Role]
    }

    /// The product every team seat is for.
    static let teamProduct = "com.example.simulation.team"

    private(set) var customers: [Customer]
    let teams: [String]

    /// Customers `admin1`, `ADMIN1`, `member2`, `MEMBER2`, … each known (or, one in four, not yet)
    /// with one seat; teams `team1` … one for every three customers, at least two.
    init(customers count: Int, random: inout SimulationRandom) {
        let names = ["admin", "member", "owner", "guest"]
        teams = (1...max(2, (count + 2) / 3)).map { "team\($0)" }
        var customers: [Customer] = []
        for index in 0..<count {
            let base = "\(names[(index / 2) % names.count])\(index / 2 + 1)"
            let id = index % 2 == 0 ? base : base.uppercased()
            let known = index < 2 || !random.chance(0.25)
            let team = teams.randomElement(using: &random) ?? "team1"
            let role: Role = random.chance(0.3) ? .admin : .unassigned
            customers.append(Customer(id: id, known: known, version: 1, teams: known ? [team: role] : [:]))
        }
        self.customers = customers
    }

    /// The customer's answer as the App Store gives it now: its groups and a marker, or `nil` (not
    /// found).
    func response(customer index: Int, environment: StoreEnvironment, serial: Int) -> GetCustomerGroupsResponse? {
        let customer = customers[index]
        guard customer.known else { return nil }
        var groups = customer.teams.keys.sorted().map { team in
            GroupEntry(
                groupID: team,
                groupType: .organization,
                roles: [RoleEntry(productID: Self.teamProduct, role: customer.teams[team] ?? .unassigned)]
            )
        }
        let marker = AnswerMarker(
            customerID: customer.id,
            environment: environment,
            version: customer.version,
            serial: serial
        )
        groups.append(GroupEntry(groupID: marker.groupID, groupType: .consumer))
        return GetCustomerGroupsResponse(groups: groups)
    }

    /// The index of the customer with exactly this id.
    func index(of customerID: String) -> Int? {
        customers.firstIndex { $0.id == customerID }
    }

    /// Every customer's version now, by index.
    var versions: [Int] { customers.map(\.version) }

    /// Whether each customer is known now, by index.
    var known: [Bool] { customers.map(\.known) }

    /// Applies a change; returns the customers whose answers it changed.
    @discardableResult
    mutating func apply(_ change: SimulationStep.Change) -> [Int] {
        switch change {
        case .join(let customer, let team, let role), .changeRole(let customer, let team, let role):
            customers[customer].teams[team] = role
            customers[customer].version += 1
            return [customer]
        case .leave(let customer, let team):
            customers[customer].teams[team] = nil
            customers[customer].version += 1
            return [customer]
        case .purchase(let customer, let team, let role):
            customers[customer].known = true
            customers[customer].teams[team] = role
            customers[customer].version += 1
            return [customer]
        case .revokeTeam(let team):
            let members = customers.indices.filter { customers[$0].teams[team] != nil }
            for member in members {
                customers[member].teams[team] = nil
                customers[member].version += 1
            }
            return members
        }
    }

    subscript(index: Int) -> Customer { customers[index] }

    var count: Int { customers.count }
}

/// The marker group every simulated answer carries: whose answer it is, for which environment,
/// which version of the customer, and which answer of the App Store (its serial).
struct AnswerMarker: Sendable, Hashable {
    var customerID: String
    var environment: StoreEnvironment
    var version: Int
    var serial: Int

    /// `m_<customer>_<environment>_<version>_<serial>`: customer ids hold no `_`.
    var groupID: String { "m_\(customerID)_\(environment.rawValue)_\(version)_\(serial)" }

    init(customerID: String, environment: StoreEnvironment, version: Int, serial: Int) {
        self.customerID = customerID
        self.environment = environment
        self.version = version
        self.serial = serial
    }

    /// The marker among an answer's groups, or `nil` when it holds none (or more than one).
    init?(in groups: GetCustomerGroupsResponse) {
        let markers = groups.groups.compactMap { AnswerMarker(groupID: $0.groupID) }
        guard markers.count == 1 else { return nil }
        self = markers[0]
    }

    init?(groupID: String) {
        let parts = groupID.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "m", let environment = StoreEnvironment(rawValue: String(parts[2])),
            let version = Int(parts[3]), let serial = Int(parts[4])
        else { return nil }
        self.init(customerID: String(parts[1]), environment: environment, version: version, serial: serial)
    }
}
