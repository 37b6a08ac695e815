public import GroupPolicy

extension GroupDecisionService {
    /// A candidate policy evaluated beside ``policies`` for every decision served, or `nil`.
    ///
    /// Each decision served is evaluated under the candidate too, off the request path, and the
    /// capabilities granted differently are counted in ``shadowReport``; the answer served is
    /// always the live policy's. The service does not reload the candidate: run its
    /// `PolicyStore.run()` beside the live store's. A successful reload of either policy, and
    /// setting this property, start the report again. See the article "Rolling out a policy
    /// change", section "Shadow on real traffic", for the queue's bounds and what it costs.
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
