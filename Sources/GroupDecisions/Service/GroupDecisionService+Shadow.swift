import AppStoreGroups
public import GroupPolicy

extension GroupDecisionService {
    /// A candidate policy evaluated beside ``policies`` for every decision served, or `nil`.
    ///
    /// For each decision it serves, the service evaluates the same groups and context under the
    /// candidate and counts, group by group, the capabilities granted differently in
    /// ``shadowReport``. The answer served is always the live policy's, byte for byte, and never
    /// waits for the candidate: each decision is queued, and one worker thread compares the queued
    /// decisions, one more evaluation and a comparison each. The queue holds at most 1,000
    /// decisions and 20,000 groups; a decision served while it is full is not compared, and counted
    /// in ``ShadowReport/skippedDecisions``.
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
    /// Decisions still queued for comparison are not in it yet: call
    /// ``waitForShadowComparisons()`` first to count every decision served so far. Without a
    /// candidate its `candidateRevision` is `nil` and it counts nothing. See the DocC article
    /// "Rolling out a policy change".
    public var shadowReport: ShadowReport { shadow.report }

    /// The JSON of ``shadowReport`` (``ShadowReport/jsonBytes(pretty:)``), serialized once per change.
    ///
    /// Callers reading a report that has not changed since the last call share its bytes, and one
    /// caller at a time serializes, so readers never hold more than one report between them. At
    /// most ``ShadowReport/maximumReportBytes``.
    ///
    /// - Parameter pretty: Pretty (two-space indentation) or compact.
    /// - Returns: The report's JSON, without a trailing newline.
    public func shadowReportJSON(pretty: Bool = false) -> [UInt8] {
        shadow.reportJSON(pretty: pretty)
    }

    /// Returns once every decision served before the call has been compared with the candidate
    /// (or skipped): a wait bounded by the queue's size, for a report that counts them all.
    public func waitForShadowComparisons() async {
        await shadow.waitForQueuedComparisons()
    }

    /// Starts ``shadowReport`` again from now, with no decisions counted.
    public func resetShadowReport() {
        shadow.reset()
    }
}
