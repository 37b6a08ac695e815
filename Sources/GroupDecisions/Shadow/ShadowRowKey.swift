import GroupPolicyBasics

/// A shadow report row's identity: the capability, gained or lost, the group type, and the rules
/// behind it under each policy (at most ``ShadowReport/maximumRulesPerList`` each, with how many
/// more there were), names compared by their bytes, as evaluation compares them; the hash is computed
/// once, before any lock is taken.
package struct ShadowRowKey: Hashable {
    var capability: String
    var gained: Bool
    var groupType: String
    var liveRules: [String]
    var candidateRules: [String]
    var liveRulesOmitted: Int
    var candidateRulesOmitted: Int
    private let byteHash: Int

    /// A key whose rule lists are kept whole: the caller has capped them.
    package init(
        capability: String,
        gained: Bool,
        groupType: String,
        liveRules: [String],
        candidateRules: [String],
        liveRulesOmitted: Int,
        candidateRulesOmitted: Int
    ) {
        self.capability = capability
        self.gained = gained
        self.groupType = groupType
        self.liveRules = liveRules
        self.candidateRules = candidateRules
        self.liveRulesOmitted = liveRulesOmitted
        self.candidateRulesOmitted = candidateRulesOmitted
        var hasher = Hasher()
        hasher.combine(gained)
        hasher.combine(liveRulesOmitted)
        hasher.combine(candidateRulesOmitted)
        for name in [capability, groupType] + liveRules + [""] + candidateRules {
            var name = name
            name.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            hasher.combine(name.utf8.count)
        }
        byteHash = hasher.finalize()
    }

    /// A key for a change with every rule behind it: each list keeps its first
    /// ``ShadowReport/maximumRulesPerList`` (the lists come sorted by their bytes) and counts the
    /// rest.
    init(capability: String, gained: Bool, groupType: String, allLiveRules: [String], allCandidateRules: [String]) {
        let limit = ShadowReport.maximumRulesPerList
        self.init(
            capability: capability,
            gained: gained,
            groupType: groupType,
            liveRules: Array(allLiveRules.prefix(limit)),
            candidateRules: Array(allCandidateRules.prefix(limit)),
            liveRulesOmitted: max(0, allLiveRules.count - limit),
            candidateRulesOmitted: max(0, allCandidateRules.count - limit)
        )
    }

    package static func == (left: ShadowRowKey, right: ShadowRowKey) -> Bool {
        left.byteHash == right.byteHash && left.gained == right.gained
            && left.liveRulesOmitted == right.liveRulesOmitted
            && left.candidateRulesOmitted == right.candidateRulesOmitted
            && left.capability.isExactly(right.capability)
            && left.groupType.isExactly(right.groupType)
            && sameBytes(left.liveRules, right.liveRules) && sameBytes(left.candidateRules, right.candidateRules)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(byteHash)
    }

    /// The most bytes this row's JSON takes without its examples, pretty printed (each string
    /// escaped at worst, six bytes a byte), so that a tally can bound its report before writing it.
    var jsonBytesAtMost: Int {
        let strings = [capability, groupType] + liveRules + candidateRules
        // Keys, punctuation, indentation and five 18-digit numbers: under 600 bytes; each listed
        // rule adds its quotes, comma, newline and indentation.
        return 600 + strings.reduce(0) { $0 + 6 * $1.utf8.count + 12 }
    }

    private static func sameBytes(_ left: [String], _ right: [String]) -> Bool {
        left.count == right.count && zip(left, right).allSatisfy { $0.isExactly($1) }
    }
}

extension ShadowReport.Example {
    /// The most bytes this example's JSON takes in a report, pretty printed.
    var jsonBytesAtMost: Int {
        let strings = [decisionID ?? "", customerHash ?? "", groupID]
        return 120 + strings.reduce(0) { $0 + 6 * $1.utf8.count }
    }
}
