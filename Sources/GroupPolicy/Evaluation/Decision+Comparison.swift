/// Which capability of one policy is which of another's, by name: made once per pair of policies,
/// so that comparing two decisions costs bit operations rather than name lookups.
///
/// A shadow evaluation (serving decisions under the live policy while evaluating a candidate
/// policy on the same responses) makes one correspondence when either policy changes and passes it
/// to ``Decision/capabilityChanges(from:through:)`` for every pair of decisions. Capabilities are
/// matched by their exact name; a capability only one of the policies declares corresponds to none
/// and is reported as gained or lost wherever a group has it. Making one reads both capability
/// catalogs once; it holds no other state and can be shared by any number of threads.
public final class CapabilityCorrespondence: Sendable {
    let live: CapabilityCatalog
    let candidate: CapabilityCatalog
    /// Whether both catalogs hold the same names (so the same indices and word counts).
    let isIdentity: Bool
    /// For each live index, the candidate's index of the same name, or -1.
    let candidateIndexOfLive: [Int32]
    /// For each candidate index, the live index of the same name, or -1.
    let liveIndexOfCandidate: [Int32]

    /// The correspondence from `live`'s capabilities to `candidate`'s.
    ///
    /// - Parameters:
    ///   - live: The policy whose decisions are served.
    ///   - candidate: The policy evaluated beside it.
    public init(from live: Policy, to candidate: Policy) {
        self.live = live.compiled.catalog
        self.candidate = candidate.compiled.catalog
        isIdentity = self.live === self.candidate || self.live.names == self.candidate.names
        candidateIndexOfLive = self.live.names.map { name in Int32(candidate.compiled.catalog.index(of: name) ?? -1) }
        liveIndexOfCandidate = self.candidate.names.map { name in Int32(live.compiled.catalog.index(of: name) ?? -1) }
    }

    /// Whether it was made for these two policies' capabilities, so that it can be kept.
    ///
    /// A policy reloaded from the same files is a new ``Policy``: after a reload, check this and
    /// make a new correspondence when it returns `false`.
    public func applies(from live: Policy, to candidate: Policy) -> Bool {
        self.live === live.compiled.catalog && self.candidate === candidate.compiled.catalog
    }
}

/// One capability that one group of a response gives under one of two decisions and not the
/// other, with the rules behind it under each.
///
/// ``Decision/capabilityChanges(from:through:)`` returns them ordered by group; within a group by
/// the capability's name (its bytes) when both policies declare the same capabilities, otherwise
/// the capabilities lost first, then those gained, each by name.
public struct CapabilityChange: Sendable, Hashable {
    /// The group's position among the decision's groups: `decision.groups[group]` is the group
    /// (``Decision/groups``, response order, a `groupId` given twice merged into one).
    public var group: Int
    /// The capability gained or lost.
    public var capability: Capability
    /// Whether the candidate decision gives the capability and the live one does not (`false`:
    /// the live decision gives it and the candidate does not).
    public var gained: Bool
    /// The ids of the rules that granted or denied the capability in the group under the live
    /// policy, each once, sorted by their bytes; empty when no rule of the live policy named it
    /// there.
    public var liveRules: [String]
    /// The ids of the rules that granted or denied the capability in the group under the candidate
    /// policy, each once, sorted by their bytes.
    public var candidateRules: [String]

    /// A change of `capability` in the group at position `group`.
    ///
    /// - Parameters:
    ///   - group: The group's position among the decision's groups.
    ///   - capability: The capability gained or lost.
    ///   - gained: Whether the candidate gives it and the live decision does not.
    ///   - liveRules: The live policy's rules behind it, sorted by their bytes.
    ///   - candidateRules: The candidate policy's rules behind it, sorted by their bytes.
    public init(group: Int, capability: Capability, gained: Bool, liveRules: [String], candidateRules: [String]) {
        self.group = group
        self.capability = capability
        self.gained = gained
        self.liveRules = liveRules
        self.candidateRules = candidateRules
    }
}

extension Decision {
    /// The capabilities each group gives under this (candidate) decision and not under `live`, or
    /// the reverse, with the rules behind each from both decisions' provenance (their grants and
    /// denials).
    ///
    /// What a shadow evaluation needs: evaluate one response under both policies, then compare.
    /// Without a change it allocates nothing (the groups' bit sets are compared word by word), so
    /// it can run on every decision served.
    ///
    /// ```swift
    /// let correspondence = CapabilityCorrespondence(from: live, to: candidate)
    /// let served = live.evaluate(response, in: context)
    /// let shadow = candidate.evaluate(response, in: context)
    /// for change in shadow.capabilityChanges(from: served, through: correspondence) ?? [] {
    ///     let group = served.groups[change.group]
    ///     print(group.groupID, change.gained ? "gains" : "loses", change.capability)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - live: The decision of the same response under the live policy.
    ///   - correspondence: Made for the live policy and this decision's policy (in that order).
    /// - Returns: The changes, ordered by group (see ``CapabilityChange``); empty when both
    ///   decisions give every group the same capabilities. `nil` when the two decisions are not of
    ///   the same response's groups, or `correspondence` was made for other policies.
    public func capabilityChanges(
        from live: Decision,
        through correspondence: CapabilityCorrespondence
    ) -> [CapabilityChange]? {
        capabilityChanges(from: live, through: correspondence, limit: .max)?.changes
    }

    /// ``capabilityChanges(from:through:)``, at most `limit` of them: the first in its order, with
    /// the number of the others, which are counted and never looked up.
    ///
    /// The work is a pass over the groups' bit sets, plus the rules of the changes returned: a
    /// comparison that may find a great many changes (many groups, a candidate that removes many
    /// capabilities) stays bounded by `limit`.
    ///
    /// - Parameters:
    ///   - live: The decision of the same response under the live policy.
    ///   - correspondence: Made for the live policy and this decision's policy (in that order).
    ///   - limit: The most changes returned; at least 0.
    /// - Returns: The first changes and how many more there were, or `nil` as
    ///   ``capabilityChanges(from:through:)`` answers it.
    public func capabilityChanges(
        from live: Decision,
        through correspondence: CapabilityCorrespondence,
        limit: Int
    ) -> (changes: [CapabilityChange], omitted: Int)? {
        guard correspondence.live === live.policy.catalog, correspondence.candidate === policy.catalog,
            records.groups.count == live.records.groups.count,
            zip(records.groups, live.records.groups).allSatisfy({ $0.first == $1.first })
        else { return nil }
        // (group, live index or -1, candidate index or -1, gained)
        var found: [(group: Int, live: Int, candidate: Int, gained: Bool)] = []
        var omitted = 0
        func add(_ change: (group: Int, live: Int, candidate: Int, gained: Bool)) {
            if found.count < limit { found.append(change) } else { omitted += 1 }
        }
        for group in records.groups.indices {
            if correspondence.isIdentity {
                for word in 0..<policy.catalog.wordCount {
                    let old = live.word(word, ofGroup: group)
                    let new = self.word(word, ofGroup: group)
                    var changed = old ^ new
                    while changed != 0 {
                        let index = word * 64 + changed.trailingZeroBitCount
                        let gained = new & (1 << UInt64(index & 63)) != 0
                        add((group, index, index, gained))
                        changed &= changed - 1
                    }
                }
                continue
            }
            live.forEachCapability(ofGroup: group) { index in
                let mapped = Int(correspondence.candidateIndexOfLive[index])
                if mapped < 0 || !has(mapped, inGroup: group) { add((group, index, mapped, false)) }
            }
            forEachCapability(ofGroup: group) { index in
                let mapped = Int(correspondence.liveIndexOfCandidate[index])
                if mapped < 0 || !live.has(mapped, inGroup: group) { add((group, mapped, index, true)) }
            }
        }
        guard !found.isEmpty else { return ([], omitted) }
        let liveRules = live.rules(for: found.map { ($0.group, $0.live) })
        let candidateRules = rules(for: found.map { ($0.group, $0.candidate) })
        let changes = found.map { change in
            CapabilityChange(
                group: change.group,
                capability: Capability(
                    change.gained ? policy.catalog.names[change.candidate] : live.policy.catalog.names[change.live]
                ),
                gained: change.gained,
                liveRules: liveRules[RulesKey(group: change.group, capability: change.live)] ?? [],
                candidateRules: candidateRules[RulesKey(group: change.group, capability: change.candidate)] ?? []
            )
        }
        return (changes, omitted)
    }

    private struct RulesKey: Hashable {
        var group: Int
        var capability: Int
    }

    /// For each (group, capability index) asked for, the labels of the rules among this decision's
    /// grants and denials for it, each once, sorted by bytes; one pass over the provenance.
    private func rules(for pairs: [(group: Int, capability: Int)]) -> [RulesKey: [String]] {
        var wanted: [RulesKey: [String]] = [:]
        for pair in pairs where pair.capability >= 0 {
            wanted[RulesKey(group: pair.group, capability: pair.capability)] = []
        }
        guard !wanted.isEmpty else { return [:] }
        func add(group: Int32, capability: Int32, document: Int32, rule: Int32) {
            let key = RulesKey(group: Int(group), capability: Int(capability))
            guard wanted[key] != nil else { return }
            wanted[key]?.append(policy.documents[Int(document)].ruleLabels[Int(rule)])
        }
        for grant in records.grants {
            add(group: grant.group, capability: grant.capability, document: grant.document, rule: grant.rule)
        }
        for denial in records.denials {
            add(group: denial.group, capability: denial.capability, document: denial.document, rule: denial.rule)
        }
        return wanted.mapValues { labels in
            Array(Set(labels)).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
    }

    /// Word `word` of the surviving capabilities of the group at `ordinal`.
    private func word(_ word: Int, ofGroup ordinal: Int) -> UInt64 {
        let group = records.groups[ordinal]
        return policy.catalog.wordCount == 1 ? group.bits : records.words[Int(group.bits) + word]
    }

    private func has(_ index: Int, inGroup ordinal: Int) -> Bool {
        word(index >> 6, ofGroup: ordinal) & (1 << UInt64(index & 63)) != 0
    }

    private func forEachCapability(ofGroup ordinal: Int, _ body: (Int) -> Void) {
        for word in 0..<policy.catalog.wordCount {
            var remaining = self.word(word, ofGroup: ordinal)
            while remaining != 0 {
                body(word * 64 + remaining.trailingZeroBitCount)
                remaining &= remaining - 1
            }
        }
    }
}
