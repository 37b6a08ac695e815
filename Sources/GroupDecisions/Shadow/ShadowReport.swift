public import Foundation

/// What a candidate policy would have changed in the decisions a ``GroupDecisionService`` served,
/// since the report last started: how many decisions, which capabilities, in which kinds of groups,
/// and because of which rules.
///
/// A service given `candidatePolicies` evaluates every decision it serves under the candidate too,
/// compares the two group by group, and counts each difference in a row of ``changes``; the answer
/// it serves is the live policy's, unchanged. Read it with
/// ``GroupDecisionService/shadowReport``; its JSON (``jsonBytes(pretty:)``) is what the decision
/// server's `GET /shadow` answers and `group-policy shadow` reads back. See the DocC article
/// "Rolling out a policy change".
public struct ShadowReport: Sendable, Hashable {
    /// The most rows a report holds: a change that would need another row is counted in
    /// ``dropped`` instead.
    public static let maximumChanges = 10_000
    /// The most examples a row keeps.
    public static let maximumExamples = 5
    /// The most bytes of JSON a service's report takes, pretty printed: a row or an example that
    /// would take it further is counted in ``dropped`` (an example is left out), so every report a
    /// service makes is a quarter of what `group-policy shadow` reads at most (64 MiB).
    public static let maximumReportBytes = 16 << 20
    /// The most group-level changes one decision's comparison looks at: the rest are counted in
    /// ``dropped`` without their rules being looked up, which bounds the work of one decision.
    public static let maximumChangesPerDecision = 1_000
    /// The most rule ids a row lists on each side: the first ones by their bytes; the rest are
    /// counted in ``Change/liveRulesOmitted`` and ``Change/candidateRulesOmitted``.
    public static let maximumRulesPerList = 16

    /// Whether a group gains or loses a capability under the candidate.
    public enum Direction: String, Sendable, Hashable, CaseIterable {
        /// The candidate grants the capability in the group; the live policy does not.
        case gained
        /// The live policy grants the capability in the group; the candidate does not.
        case lost
    }

    /// One decision that had a change, and the group it was in.
    public struct Example: Sendable, Hashable {
        /// The served decision's id: its ``ServedDecision/decisionID``.
        ///
        /// ``GroupDecisionService`` gives every decision it serves an id, so the examples of its
        /// reports always have one; `nil` only in a report read back from JSON whose example has
        /// `null` there, or made by hand.
        public var decisionID: String?
        /// The customer as the service's ``DecisionLog`` hashes them (salted): never a raw id.
        ///
        /// The example joins the decision log's records by it; `nil` when the service has no
        /// decision log.
        public var customerHash: String?
        /// The group the change was in.
        public var groupID: String

        /// Creates an example.
        public init(decisionID: String?, customerHash: String?, groupID: String) {
            self.decisionID = decisionID
            self.customerHash = customerHash
            self.groupID = groupID
        }
    }

    /// One kind of change: a capability gained or lost in a type of group, because of the same rules
    /// under each policy, with how often it happened.
    public struct Change: Sendable, Hashable {
        /// The capability.
        public var capability: String
        /// Gained or lost under the candidate.
        public var direction: Direction
        /// The type of the groups it happened in (Apple's `groupType`, as sent).
        public var groupType: String
        /// The ids of the rules that granted or denied the capability in the group under the live
        /// policy (from the Decision's grants and denials), each once, sorted by their bytes; empty
        /// when no rule named it there.
        public var liveRules: [String]
        /// The same under the candidate.
        public var candidateRules: [String]
        /// Rules behind the change under the live policy that ``liveRules`` leaves out, because a row
        /// lists at most ``ShadowReport/maximumRulesPerList``; zero when it lists them all.
        public var liveRulesOmitted: Int
        /// The same under the candidate, for ``candidateRules``.
        public var candidateRulesOmitted: Int
        /// Group-level changes counted: a decision with this change in two groups counts two.
        public var groups: Int
        /// Decisions that had this change in at least one group.
        public var decisions: Int
        /// Up to ``ShadowReport/maximumExamples`` of those decisions, the first ones counted, each
        /// with the first of its groups that had the change.
        public var examples: [Example]

        /// Creates a row.
        public init(
            capability: String,
            direction: Direction,
            groupType: String,
            liveRules: [String],
            candidateRules: [String],
            liveRulesOmitted: Int = 0,
            candidateRulesOmitted: Int = 0,
            groups: Int,
            decisions: Int,
            examples: [Example]
        ) {
            self.capability = capability
            self.direction = direction
            self.groupType = groupType
            self.liveRules = liveRules
            self.candidateRules = candidateRules
            self.liveRulesOmitted = liveRulesOmitted
            self.candidateRulesOmitted = candidateRulesOmitted
            self.groups = groups
            self.decisions = decisions
            self.examples = examples
        }
    }

    /// The revision of the live policy the decisions were made with (`Policy.revision`).
    public var liveRevision: String
    /// The revision of the candidate compared with, or `nil` when no candidate is loaded (then
    /// nothing is compared).
    public var candidateRevision: String?
    /// When counting started: the service's creation, the last reset, or the last reload of either
    /// policy.
    public var since: Date
    /// Decisions compared.
    public var decisions: Int
    /// Decisions whose capabilities differ in at least one group.
    public var changedDecisions: Int
    /// Group-level changes not counted in any row: their row would have been one more than
    /// ``maximumChanges`` or taken the report past ``maximumReportBytes``, or their decision had
    /// more than ``maximumChangesPerDecision``; zero means every change is in ``changes``.
    public var dropped: Int
    /// Decisions served with a candidate loaded that were not compared, because the comparisons
    /// waiting off the request path were already at their limit; zero means every decision served
    /// was compared (and counted in ``decisions``).
    public var skippedDecisions: Int
    /// The rows, most decisions first (see ``Change`` and the article "Rolling out a policy change",
    /// section "Reading the report", for the order).
    public var changes: [Change]

    /// Creates a report.
    public init(
        liveRevision: String,
        candidateRevision: String?,
        since: Date,
        decisions: Int,
        changedDecisions: Int,
        dropped: Int,
        skippedDecisions: Int = 0,
        changes: [Change]
    ) {
        self.liveRevision = liveRevision
        self.candidateRevision = candidateRevision
        self.since = since
        self.decisions = decisions
        self.changedDecisions = changedDecisions
        self.dropped = dropped
        self.skippedDecisions = skippedDecisions
        self.changes = changes
    }
}

extension ShadowReport.Change {
    /// The report's order: more decisions first, then by capability, gained before lost, group type,
    /// live rules, candidate rules (names compared by their bytes, lists element by element).
    package static func precedes(_ left: Self, _ right: Self) -> Bool {
        if left.decisions != right.decisions { return left.decisions > right.decisions }
        if let order = byteOrder(left.capability, right.capability) { return order }
        if left.direction != right.direction { return left.direction == .gained }
        if let order = byteOrder(left.groupType, right.groupType) { return order }
        if let order = byteOrder(left.liveRules, right.liveRules) { return order }
        return byteOrder(left.candidateRules, right.candidateRules) ?? false
    }

    /// Whether `left` comes first by its bytes, or `nil` when both have the same bytes.
    package static func byteOrder(_ left: String, _ right: String) -> Bool? {
        var leftBytes = left.utf8.makeIterator()
        var rightBytes = right.utf8.makeIterator()
        while true {
            switch (leftBytes.next(), rightBytes.next()) {
            case (nil, nil): return nil
            case (nil, _): return true
            case (_, nil): return false
            case (let leftByte?, let rightByte?) where leftByte != rightByte: return leftByte < rightByte
            default: continue
            }
        }
    }

    /// ``byteOrder(_:_:)`` for lists, element by element, a prefix first.
    package static func byteOrder(_ left: [String], _ right: [String]) -> Bool? {
        for (leftName, rightName) in zip(left, right) {
            if let order = byteOrder(leftName, rightName) { return order }
        }
        return left.count == right.count ? nil : left.count < right.count
    }
}
