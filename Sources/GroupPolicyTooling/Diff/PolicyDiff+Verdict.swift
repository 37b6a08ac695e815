import GroupPolicy
import GroupPolicyBasics

extension PolicyDiff {
    /// What a change does to what customers get, over the whole scenario space: nothing, more,
    /// less, or more in some scenarios and less in others.
    ///
    /// Exact, like the diff it comes from: a version *widens* a capability when some scenario
    /// (some group, with its role entries, environment and entitlements) has it under the new
    /// version and not under the old, and *narrows* it when some scenario had it and no longer
    /// has; for a workspace, when some group gains a membership or becomes its administrator, or
    /// loses one or stops being its administrator. The diff's rows are the minimal such
    /// scenarios, and there is one exactly when there is a difference, so the verdict is read
    /// from the rows.
    public struct Verdict: Sendable, Hashable, CustomStringConvertible {
        /// Some scenario gains.
        public let widens: Bool
        /// Some scenario loses.
        public let narrows: Bool

        private init(widens: Bool, narrows: Bool) {
            self.widens = widens
            self.narrows = narrows
        }

        /// Every scenario gets the same under both versions.
        public static let equivalent = Verdict(widens: false, narrows: false)
        /// Some scenario gains, none loses: the new version is more permissive.
        public static let widens = Verdict(widens: true, narrows: false)
        /// Some scenario loses, none gains: the new version is less permissive.
        public static let narrows = Verdict(widens: false, narrows: true)
        /// Some scenario gains and another loses: the versions are incomparable.
        public static let widensAndNarrows = Verdict(widens: true, narrows: true)

        /// `equivalent`, `widens`, `narrows` or `widens and narrows`.
        public var description: String {
            switch (widens, narrows) {
            case (false, false): "equivalent"
            case (true, false): "widens"
            case (false, true): "narrows"
            case (true, true): "widens and narrows"
            }
        }

        /// The verdict of two parts of a change together.
        public func combined(with other: Verdict) -> Verdict {
            Verdict(widens: widens || other.widens, narrows: narrows || other.narrows)
        }
    }

    /// The verdict of the whole change: every capability and every workspace membership.
    public var verdict: Verdict {
        (capabilityVerdicts.map(\.verdict) + workspaceVerdicts.map(\.verdict)).reduce(Verdict.equivalent) {
            $0.combined(with: $1)
        }
    }

    /// The verdict for one capability: ``Verdict/equivalent`` when no scenario's answer for it
    /// changes (also for a capability neither version declares).
    public func verdict(forCapability capability: String) -> Verdict {
        capabilityVerdicts.first { $0.capability.isExactly(capability) }?.verdict ?? .equivalent
    }

    /// The verdict for one workspace's memberships: ``Verdict/equivalent`` when no scenario's
    /// membership in it changes.
    public func verdict(forWorkspace workspace: String) -> Verdict {
        workspaceVerdicts.first { $0.workspace.isExactly(workspace) }?.verdict ?? .equivalent
    }

    /// Each changed capability's verdict, from the rows (added is wider, removed narrower), in the
    /// rows' order.
    static func capabilityVerdicts(of rows: [Row]) -> [(capability: String, verdict: Verdict)] {
        verdicts(rows.map { ($0.capability, $0.change == .added ? Verdict.widens : .narrows) }).map {
            (capability: $0.name, verdict: $0.verdict)
        }
    }

    /// Each changed workspace's verdict, from the rows, in the rows' order: a membership gained,
    /// or a member made administrator, is wider; a membership lost, or an administrator made
    /// member, narrower.
    static func workspaceVerdicts(of rows: [WorkspaceRow]) -> [(workspace: String, verdict: Verdict)] {
        verdicts(
            rows.map { row in
                let wider = row.oldRole == nil || (row.oldRole == .member && row.newRole == .admin)
                return (row.workspace, wider ? Verdict.widens : .narrows)
            }
        )
        .map { (workspace: $0.name, verdict: $0.verdict) }
    }

    /// The changes of each name combined, names in order of first appearance, compared by bytes.
    private static func verdicts(_ changes: [(String, Verdict)]) -> [(name: String, verdict: Verdict)] {
        var result: [(name: String, verdict: Verdict)] = []
        var positions: [ExactName: Int] = [:]
        for (name, change) in changes {
            if let position = positions[ExactName(name)] {
                result[position].verdict = result[position].verdict.combined(with: change)
            } else {
                positions[ExactName(name)] = result.count
                result.append((name, change))
            }
        }
        return result
    }
}
