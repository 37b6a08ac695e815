#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a pthread mutex, for the service's caches, budgets and flights.
///
/// A pthread mutex rather than `Synchronization.Mutex` for the same reason as the policy store's:
/// the thread sanitizer models pthread mutexes but not Linux futexes, and these types are shared
/// by every request task.
final class Guarded<State>: @unchecked Sendable {
    // The mutex lives at a stable heap address for its whole life (pthread requires that).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    // Only touched between lock and unlock, which is what makes the class safe to share.
    private var state: State

    init(_ state: State) {
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

    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
