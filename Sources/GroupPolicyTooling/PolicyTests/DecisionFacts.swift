import GroupPolicy
import Synchronization

/// What running test cases read of their decisions, counted for tests that bound it: names of
/// capabilities, groups, grants and memberships read out of a decision, and decisions coverage
/// recorded.
final class ExpectationWork: Sendable {
    private let counts = Mutex((names: 0, recordedDecisions: 0))

    /// The counter of the current task, when a test set one.
    @TaskLocal static var current: ExpectationWork?

    var names: Int { counts.withLock { $0.names } }
    var recordedDecisions: Int { counts.withLock { $0.recordedDecisions } }

    static func read(names count: Int) {
        current?.counts.withLock { $0.names += count }
    }

    static func recordedDecision() {
        current?.counts.withLock { $0.recordedDecisions += 1 }
    }
}

/// What the expectations of policy test cases read from one decision, each part built once, on
/// first use, and shared by every case that shares the decision.
///
/// A test file's cases often share one response (a `responseFile`) and context, hence one
/// decision; a case costs the size of its own expectation, never the size of the decision: the
/// capabilities, groups, grants and workspaces of a decision are indexed once, by their bytes (as
/// the engine compares names), and a failure lists at most ``FailureList/maximumNames`` of them.
final class DecisionFacts {
    let decision: Decision

    init(_ decision: Decision) {
        self.decision = decision
    }

    /// The customer's capabilities, sorted as decisions print them.
    private(set) lazy var capabilities: [String] = {
        let names = decision.capabilities.names
        ExpectationWork.read(names: names.count)
        return names
    }()

    /// The customer's capabilities, by their bytes.
    private(set) lazy var capabilitySet: Set<ExactName> = Set(capabilities.map(ExactName.init))

    /// The decision's groups (merged by id) in response order, and their positions by id.
    private(set) lazy var groups: (list: [GroupDecision], byID: [ExactName: Int]) = {
        let list = decision.groups
        ExpectationWork.read(names: list.count)
        var byID: [ExactName: Int] = [:]
        for (position, group) in list.enumerated() where byID[ExactName(group.groupID)] == nil {
            byID[ExactName(group.groupID)] = position
        }
        return (list, byID)
    }()

    /// The first names of each group asked about, by position: at most ``groupPrefixLength``.
    private var groupPrefixes: [Int: [String]] = [:]

    /// How many names of a group are kept for later cases: 256.
    ///
    /// A failure shows the first names of a group outside what its case expected; a case that
    /// expects more than this many of them pays for reading the whole group once, which its own
    /// length pays for.
    static let groupPrefixLength = 256

    /// The first `first` capabilities of the group at `position`, in order, that are not in
    /// `excluded`.
    func names(ofGroup position: Int, notIn excluded: Set<ExactName>, first: Int) -> [String] {
        let prefix: [String]
        if let known = groupPrefixes[position] {
            prefix = known
        } else {
            let names = groups.list[position].capabilities.names
            ExpectationWork.read(names: names.count)
            prefix = Array(names.prefix(Self.groupPrefixLength))
            groupPrefixes[position] = prefix
        }
        let found = Self.first(first, of: prefix, notIn: excluded)
        if found.count == first || prefix.count < Self.groupPrefixLength { return found }
        let all = groups.list[position].capabilities.names
        ExpectationWork.read(names: all.count)
        return Self.first(first, of: all, notIn: excluded)
    }

    /// The first `count` of `names` that are not in `excluded`, reading only as far as needed.
    static func first(_ count: Int, of names: [String], notIn excluded: Set<ExactName>) -> [String] {
        var found: [String] = []
        var read = 0
        for name in names {
            guard found.count < count else { break }
            read += 1
            if !excluded.contains(ExactName(name)) { found.append(name) }
        }
        ExpectationWork.read(names: read)
        return found
    }

    /// Per capability, the distinct `'rule' in group G` reasons it is granted, in grant order: the
    /// first few of each, and how many there are.
    private(set) lazy var grantReasons: [ExactName: (first: [String], count: Int)] = {
        struct Reason: Hashable {
            var rule: ExactName
            var groupID: ExactName
        }
        var seen: [ExactName: Set<Reason>] = [:]
        var reasons: [ExactName: (first: [String], count: Int)] = [:]
        let grants = decision.grants
        ExpectationWork.read(names: grants.count)
        for grant in grants {
            let capability = ExactName(grant.capability)
            let reason = Reason(rule: ExactName(grant.rule), groupID: ExactName(grant.groupID))
            guard seen[capability, default: []].insert(reason).inserted else { continue }
            var entry = reasons[capability] ?? ([], 0)
            if entry.first.count < FailureList.maximumNames {
                entry.first.append("'\(grant.rule)' in group \(grant.groupID)")
            }
            entry.count += 1
            reasons[capability] = entry
        }
        return reasons
    }()

    /// The workspace memberships as test failures print them, sorted.
    private(set) lazy var workspaces: [String] = {
        let memberships = decision.workspaces
        ExpectationWork.read(names: memberships.count)
        return memberships.map(Self.describe).sorted()
    }()

    /// A membership as a test failure prints it: `{"workspace": "team", "groupId": "1", "role": "member"}`.
    static func describe(_ membership: WorkspaceMembership) -> String {
        "{\"workspace\": \"\(membership.workspace.id)\", \"groupId\": \"\(membership.groupID)\", \"role\": \"\(membership.role.rawValue)\"}"
    }
}

/// A list of names in a test failure: `["a", "b"]`, cut after ``maximumNames`` names or
/// ``maximumBytes`` bytes of names, saying how many were left out: `["a", "b", … and 9990 more]`.
///
/// A failure line names what the decision holds, which the test file does not bound: a decision
/// can hold 10,000 capabilities, 10,000 groups and a million workspace memberships, and thousands
/// of cases can print it. Cut, each line stays short and the output grows with the test file.
enum FailureList {
    /// The most names one list shows: 10.
    static let maximumNames = 10
    /// The most bytes of names one list shows: 1,024 (a name that does not fit is left out, and
    /// counted).
    static let maximumBytes = 1024

    /// The list of `names`, of which there are `total` (more than given when the caller gave only
    /// the first few).
    static func text(_ names: some Sequence<String>, total: Int? = nil, quoted: Bool = true) -> String {
        var shown: [String] = []
        var bytes = 0
        var seen = 0
        var full = false
        for name in names {
            seen += 1
            if !full {
                let item = quoted ? "\"\(name)\"" : name
                if shown.count < maximumNames, bytes + item.utf8.count <= maximumBytes {
                    shown.append(item)
                    bytes += item.utf8.count
                    continue
                }
                full = true
            }
            if total != nil { break }
        }
        let left = (total ?? seen) - shown.count
        let cut = left > 0 ? (shown.isEmpty ? "… and \(left) more" : ", … and \(left) more") : ""
        return "[" + shown.joined(separator: ", ") + cut + "]"
    }
}
