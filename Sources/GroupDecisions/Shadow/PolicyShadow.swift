import AppStoreGroups
import GroupPolicy
import GroupPolicyBasics

/// A candidate policy beside the live one: every decision served is evaluated under it too,
/// compared group by group, and counted in a ``ShadowTally``.
///
/// A decision served is queued (``enqueue(_:)``) and compared off the request path (its cost is in
/// the article "Rolling out a policy change", section "What it costs"). The tally is about one pair
/// of revisions: it starts again when either policy reloads, when the candidate is replaced, and on
/// ``reset()``; a decision made with other revisions is not counted.
final class PolicyShadow: Sendable {
    struct State {
        var candidate: PolicyStore?
        var candidateHandler: PolicyStore.ReloadHandlerID?
        var liveHandler: PolicyStore.ReloadHandlerID?
        /// Made once per pair of policy snapshots, after a reload.
        var correspondence: CapabilityCorrespondence?
        var tally: ShadowTally
        /// Moves each time the tally starts again.
        var epoch = 0
        var queue = ShadowQueue()
    }

    let live: PolicyStore
    private let timeSource: TimeSource
    let state: Locked<State>
    /// The last report serialized, for readers of an unchanged report.
    let serialized = Locked(SerializedReport())
    /// Called by the worker before each comparison (tests hold the worker with it).
    let beforeComparison = Locked<(@Sendable () -> Void)?>(nil)

    init(live: PolicyStore, candidate: PolicyStore?, timeSource: TimeSource) {
        self.live = live
        self.timeSource = timeSource
        state = Locked(
            State(
                tally: ShadowTally(
                    liveRevision: live.revision,
                    candidateRevision: candidate?.revision,
                    since: timeSource.now()
                )
            )
        )
        let handler = live.addReloadHandler { [weak self] outcome, _ in
            guard case .reloaded = outcome else { return }
            self?.restart(ifCandidate: nil)
        }
        state.withLock { $0.liveHandler = handler }
        if let candidate { self.candidate = candidate }
    }

    deinit {
        let (candidate, candidateHandler, liveHandler) = state.withLock {
            ($0.candidate, $0.candidateHandler, $0.liveHandler)
        }
        if let liveHandler { live.removeReloadHandler(liveHandler) }
        if let candidate, let candidateHandler { candidate.removeReloadHandler(candidateHandler) }
    }

    /// The candidate store; setting it (or `nil`) starts the tally again.
    var candidate: PolicyStore? {
        get { state.withLock { $0.candidate } }
        set {
            state.withLock { state in
                if let old = state.candidate, let handler = state.candidateHandler { old.removeReloadHandler(handler) }
                state.candidate = newValue
                state.candidateHandler = newValue?.addReloadHandler { [weak self, weak newValue] outcome, _ in
                    guard case .reloaded = outcome, let newValue else { return }
                    self?.restart(ifCandidate: newValue)
                }
                startAgain(&state)
            }
        }
    }

    /// The report so far, its rows in the report's order.
    var report: ShadowReport {
        // The rows are copied under the lock, so no decision ever pays for a copy; sorted outside it.
        var report = state.withLock { $0.tally.report }
        report.changes.sort(by: ShadowReport.Change.precedes)
        return report
    }

    /// Starts the tally again, now.
    func reset() {
        restart(ifCandidate: nil)
    }

    /// Compares one decision with the candidate's decision for the same groups and context, and
    /// counts it: the work of the queue's worker.
    func compare(_ job: ShadowJob) {
        let read = state.withLock { state in state.candidate.map { ($0, state.correspondence) } }
        guard case (let store, let known)? = read else { return }
        let candidatePolicy = store.current
        let correspondence: CapabilityCorrespondence
        if let known, known.applies(from: job.policy, to: candidatePolicy) {
            correspondence = known
        } else {
            correspondence = CapabilityCorrespondence(from: job.policy, to: candidatePolicy)
            state.withLock { $0.correspondence = correspondence }
        }
        let candidate = candidatePolicy.evaluate(job.groups, in: job.context)
        guard
            let found = candidate.capabilityChanges(
                from: job.decision,
                through: correspondence,
                limit: ShadowReport.maximumChangesPerDecision
            )
        else { return }
        let rows = found.changes.isEmpty ? [] : ShadowTally.rows(of: found.changes, in: job.decision)
        state.withLock { state in
            guard state.candidate === store,
                state.tally.counts(live: job.policy.revision, candidate: candidatePolicy.revision)
            else { return }
            state.tally.record(
                rows,
                omitted: found.omitted,
                decisionID: job.decisionID,
                customerHash: job.customerHash
            )
        }
    }

    /// Starts the tally again with the revisions serving now; for a candidate's reload, only while
    /// that store is still the candidate.
    private func restart(ifCandidate store: PolicyStore?) {
        state.withLock { state in
            if let store, state.candidate !== store { return }
            startAgain(&state)
        }
    }

    /// A new tally for the revisions serving now, and a new epoch.
    private func startAgain(_ state: inout State) {
        state.correspondence = nil
        state.tally = ShadowTally(
            liveRevision: live.revision,
            candidateRevision: state.candidate?.revision,
            since: timeSource.now()
        )
        state.epoch += 1
    }
}
