import GroupPolicyBasics

extension ShadowReport {
    /// The report as JSON: what the decision server's `GET /shadow` answers and
    /// `group-policy shadow` reads, rows in the order of ``changes``; its keys are listed in the
    /// article "Rolling out a policy change", section "The report's JSON".
    ///
    /// - Parameter pretty: Pretty (two-space indentation) or compact.
    /// - Returns: The JSON as UTF-8 bytes, without a trailing newline.
    public func jsonBytes(pretty: Bool = false) -> [UInt8] {
        Array(jsonString(pretty: pretty).utf8)
    }

    /// ``jsonBytes(pretty:)`` as a string.
    ///
    /// - Parameter pretty: Pretty (two-space indentation) or compact.
    /// - Returns: The JSON text, without a trailing newline.
    public func jsonString(pretty: Bool = false) -> String {
        var writer = JSONWriter(pretty: pretty, reservingCapacity: 256 + changes.count * 256)
        writer.beginObject()
        writer.member("liveRevision", liveRevision)
        writer.member("candidateRevision", orNull: candidateRevision)
        writer.member("since", Timestamp.rfc3339(since))
        writer.member("decisions", number: decisions)
        writer.member("changedDecisions", number: changedDecisions)
        writer.member("dropped", number: dropped)
        writer.member("skippedDecisions", number: skippedDecisions)
        writer.member("changes", objects: changes) { writer, change in
            writer.member("capability", change.capability)
            writer.member("change", change.direction.rawValue)
            writer.member("groupType", change.groupType)
            writer.member("liveRules", strings: change.liveRules)
            writer.member("candidateRules", strings: change.candidateRules)
            writer.member("liveRulesOmitted", number: change.liveRulesOmitted)
            writer.member("candidateRulesOmitted", number: change.candidateRulesOmitted)
            writer.member("groups", number: change.groups)
            writer.member("decisions", number: change.decisions)
            writer.member("examples", objects: change.examples) { writer, example in
                writer.member("decisionId", orNull: example.decisionID)
                writer.member("customerHash", orNull: example.customerHash)
                writer.member("groupId", example.groupID)
            }
        }
        writer.endObject()
        return writer.string
    }
}
