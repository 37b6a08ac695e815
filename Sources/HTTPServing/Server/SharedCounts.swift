import Synchronization

/// The counts every loop shares, each bounded by a limit: connections waiting for heads, requests
/// being answered, bytes of bodies in flight, connections draining.
final class SharedCounts: Sendable {
    let waiting = Atomic<Int>(0)
    let requests = Atomic<Int>(0)
    let bodyBytes = Atomic<Int>(0)
    let closing = Atomic<Int>(0)

    /// Adds `amount` to `count` when it stays at most `limit`.
    static func take(_ count: borrowing Atomic<Int>, _ amount: Int, upTo limit: Int) -> Bool {
        var current = count.load(ordering: .relaxed)
        while current + amount <= limit {
            let (exchanged, original) = count.compareExchange(
                expected: current,
                desired: current + amount,
                ordering: .relaxed
            )
            if exchanged { return true }
            current = original
        }
        return false
    }
}
