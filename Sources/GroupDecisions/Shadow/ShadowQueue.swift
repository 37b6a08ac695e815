import Dispatch
import GroupPolicy

/// One served decision waiting to be compared with the candidate.
struct ShadowJob: Sendable {
    var decision: Decision
    var policy: Policy
    var groups: GetCustomerGroupsResponse
    var context: EvaluationContext
    var decisionID: String?
    /// The decision log's hash of the customer, if the service has a log.
    var customerHash: String?
}

/// The decisions waiting for comparison, bounded by count and by groups, and who waits for them.
struct ShadowQueue {
    static let maximumDecisions = 1_000
    /// The most groups waiting, over every decision waiting: a decision that would take the queue
    /// past it is skipped, unless the queue is empty (a customer with more groups is still compared,
    /// alone).
    static let maximumGroups = 20_000

    private(set) var jobs: [ShadowJob] = []
    private var head = 0
    private(set) var groups = 0
    /// Whether a worker is draining the queue.
    var draining = false
    /// Decisions queued since the shadow began, and decisions done (compared, or found without a
    /// candidate).
    private(set) var queued = 0
    private(set) var done = 0
    /// Callers waiting until `done` reaches their mark.
    private var waiters: [(mark: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Queues a job if it fits; `false` when it does not.
    mutating func append(_ job: ShadowJob) -> Bool {
        let count = job.groups.groups.count
        guard jobs.count - head < Self.maximumDecisions, head == jobs.count || groups + count <= Self.maximumGroups
        else { return false }
        jobs.append(job)
        groups += count
        queued += 1
        return true
    }

    /// The next job, or `nil` (then the worker stops: `draining` is cleared).
    mutating func next() -> ShadowJob? {
        guard head < jobs.count else {
            jobs.removeAll(keepingCapacity: false)
            head = 0
            draining = false
            return nil
        }
        let job = jobs[head]
        head += 1
        groups -= job.groups.groups.count
        if head >= 64, head * 2 >= jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }

    /// Counts a job done, and hands back the waiters it releases.
    mutating func finish() -> [CheckedContinuation<Void, Never>] {
        done += 1
        let released = waiters.filter { $0.mark <= done }.map(\.continuation)
        waiters.removeAll { $0.mark <= done }
        return released
    }

    /// Adds a waiter for every job queued so far; `false` when they are all done already.
    mutating func wait(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        guard done < queued else { return false }
        waiters.append((queued, continuation))
        return true
    }
}

extension PolicyShadow {
    /// The queue the worker drains on: one worker at a time, outside Swift's cooperative threads,
    /// so a long comparison never holds back a request.
    static let worker = DispatchQueue(label: "GroupDecisions.PolicyShadow", qos: .utility)

    /// Queues a served decision for comparison, off the request path; with the queue full, counts it
    /// as skipped; the job is made only with a candidate (without one, making it cost a tenth of a
    /// cache hit, measured).
    func enqueue(_ job: @autoclosure () -> ShadowJob) {
        let startWorker = state.withLock { state -> Bool in
            guard state.candidate != nil else { return false }
            guard state.queue.append(job()) else {
                state.tally.skip()
                return false
            }
            guard !state.queue.draining else { return false }
            state.queue.draining = true
            return true
        }
        if startWorker { Self.worker.async { [self] in drain() } }
    }

    /// Returns once every decision queued before the call has been compared (or found without a
    /// candidate): a bounded wait, since the queue is bounded.
    func waitForQueuedComparisons() async {
        await withCheckedContinuation { continuation in
            let waiting = state.withLock { $0.queue.wait(continuation) }
            if !waiting { continuation.resume() }
        }
    }

    /// Compares queued decisions until none is left.
    private func drain() {
        while let job = state.withLock({ $0.queue.next() }) {
            beforeComparison.withLock { $0 }?()
            compare(job)
            for waiter in state.withLock({ $0.queue.finish() }) { waiter.resume() }
        }
    }
}
