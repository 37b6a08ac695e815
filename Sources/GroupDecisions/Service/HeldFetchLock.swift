import GroupPolicyBasics

/// A fetch lock this flight holds, and whether the write that kept the fetched answer released it
/// already (the flight releases it otherwise).
final class HeldFetchLock: Sendable {
    /// The value the lock was taken with.
    let owner: String
    private let released = Locked(false)

    init(owner: String) {
        self.owner = owner
    }

    /// Whether the lock was released.
    var isReleased: Bool { released.withLock { $0 } }

    /// Records that the lock was released.
    func markReleased() {
        released.withLock { $0 = true }
    }
}
