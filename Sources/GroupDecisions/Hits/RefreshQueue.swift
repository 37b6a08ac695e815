import GroupPolicyBasics

/// The customers due a refresh ahead, waiting for one of the service's refresh workers: bounded,
/// each customer at most once (queued or refreshing), and accepting nothing while no worker runs.
final class RefreshQueue: Sendable {
    private struct State {
        var queue: [CustomerKey] = []
        /// Customers queued or being refreshed.
        var held: Set<CustomerKey> = []
        /// Workers running (inside ``GroupDecisionService/run()``).
        var workers = 0
        var waiting: [(id: Int, continuation: CheckedContinuation<CustomerKey?, Never>)] = []
        var nextWaiterID = 0
    }

    /// The most customers queued or being refreshed at once.
    let capacity: Int
    private let state = Locked(State())

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Asks for a refresh of `key`: `false` (nothing done) when no worker runs, the customer is
    /// already queued or being refreshed, or the queue is full.
    @discardableResult
    func offer(_ key: CustomerKey) -> Bool {
        let (accepted, waiter) = state.withLock { state -> (Bool, CheckedContinuation<CustomerKey?, Never>?) in
            guard state.workers > 0, state.held.count < capacity, !state.held.contains(key) else { return (false, nil) }
            state.held.insert(key)
            if !state.waiting.isEmpty { return (true, state.waiting.removeFirst().continuation) }
            state.queue.append(key)
            return (true, nil)
        }
        waiter?.resume(returning: key)
        return accepted
    }

    var workerCount: Int { state.withLock { $0.workers } }

    var count: Int { state.withLock { $0.held.count } }

    /// Marks a worker as running; ``leave()`` when it stops.
    func join() { state.withLock { $0.workers += 1 } }

    /// Marks a worker as stopped; when none is left, the queue is emptied.
    func leave() {
        state.withLock { state in
            state.workers -= 1
            if state.workers == 0 {
                for key in state.queue { state.held.remove(key) }
                state.queue.removeAll()
            }
        }
    }

    /// Marks a customer's refresh as done: it may be offered again.
    func done(_ key: CustomerKey) { _ = state.withLock { $0.held.remove(key) } }

    /// The next customer to refresh, waiting for one; `nil` once the task is cancelled.
    func next() async -> CustomerKey? {
        let id = state.withLock { state -> Int in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CustomerKey?, Never>) in
                let ready = state.withLock { state -> CustomerKey?? in
                    if Task.isCancelled { return .some(nil) }
                    if !state.queue.isEmpty { return .some(state.queue.removeFirst()) }
                    state.waiting.append((id, continuation))
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<CustomerKey?, Never>? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: index).continuation
            }
            waiter?.resume(returning: nil)
        }
    }
}
