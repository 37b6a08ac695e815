#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value guarded by a pthread mutex: the policy store's snapshot, and the decision service's
/// caches, budgets and flights in AppStoreGroups (through `package` access).
///
/// The store uses this instead of `Synchronization.Mutex` on purpose: on Linux that mutex is built
/// on raw futexes, which the thread sanitizer cannot see, so every reader of a reloaded policy
/// would be reported as racing with the reload. A pthread mutex is modelled by the sanitizer, which
/// keeps `swift test --sanitize=thread` meaningful. Uncontended, both cost about the same.
package final class Locked<State>: @unchecked Sendable {
    // The mutex lives at a stable heap address for its whole life (pthread requires that).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Only touched between lock and unlock, which is what makes the class safe to share.
    private var state: State

    package init(_ state: State) {
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.state = state
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
