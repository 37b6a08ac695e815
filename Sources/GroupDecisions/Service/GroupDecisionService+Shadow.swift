import AppStoreGroups
public import GroupPolicy

extension GroupDecisionService {
    /// A candidate policy evaluated beside ``policies`` for every decision served, or `nil`.
    ///
    /// For each decision it serves, the service evaluates the same groups and context under the
    /// candidate and counts, group by group, the capabilities granted differently in
    /// ``shadowReport``. The answer served is always the live policy's, byte for byte; the candidate
    /// costs each decision one more evaluation and a comparison.
    ///
    /// The service does not reload the candidate: run its `PolicyStore.run()` beside the live
    /// store's, as the app runs that one. A reload of the candidate that fails keeps its last good
    /// version in the comparison (as `PolicyStore` keeps it), so the report goes on counting against
    /// the revision it names; a reload that succeeds, of either policy, starts the report again.
    /// Setting the property, to a store or to `nil`, starts the report again too: an app whose
    /// candidate did not load at startup sets it once it does.
    public var candidatePolicies: PolicyStore? {
        get { shadow.candidate }
        set { shadow.candidate = newValue }
    }

    /// What the candidate would have changed in the decisions served since the report started: the
    /// service's creation, the last ``resetShadowReport()``, the last reload of either policy, or
    /// the last change of ``candidatePolicies``.
    ///
    /// Without a candidate its `candidateRevision` is `nil` and it counts nothing. See the DocC
    /// article "Rolling out a policy change".
    public var shadowReport: ShadowReport { shadow.report }

    /// Starts ``shadowReport`` again from now, with no decisions counted.
    public func resetShadowReport() {
        shadow.reset()
    }
}
