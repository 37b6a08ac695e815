import Foundation
package import Testing

/// Runs each test case of a CPU-bound test on a thread of its own, off Swift's cooperative pool.
///
/// The package's tests run in one process, every suite at once, and Swift runs their async code on
/// a cooperative pool as wide as the machine has cores: two threads on a two-core machine. A test
/// that computes for seconds without suspending (many seeds of a simulation, a long model check,
/// a 62 MiB report) holds one of those threads all along, and two such tests hold the pool: every
/// test waiting for a socket, a process or a timer then waits for them as well, past its timeouts
/// on a busy machine. Marked `.cpuBound`, each test case runs with a task executor preference for a
/// thread started for it: its nonisolated code, its child tasks and the default actors it calls run
/// on that thread (actors with an executor of their own, and the main actor, keep theirs), and the
/// operating system shares the cores between it and the cooperative threads.
package struct CPUBoundTest: TestTrait, SuiteTrait, TestScoping {
    package var isRecursive: Bool { true }

    /// Scopes each test case, never the suite around them, so the cases of a test each get a
    /// thread and run beside each other as before.
    package func scopeProvider(for test: Test, testCase: Test.Case?) -> CPUBoundTest? {
        testCase == nil ? nil : self
    }

    package func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let executor = ThreadExecutor(name: "cpuBound \(test.name)")
        defer { executor.finish() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == CPUBoundTest {
    /// Runs each test case on a thread of its own, leaving Swift's cooperative threads to the tests
    /// that wait for I/O.
    package static var cpuBound: Self { CPUBoundTest() }
}

/// A task executor running its jobs, in order, on one thread it starts, until ``finish()``.
///
/// A job that comes after the thread has ended (a task that keeps no preference any more, resumed
/// late) goes to the global concurrent executor instead of being lost.
package final class ThreadExecutor: TaskExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var finishing = false
    private var ended = false

    package init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let taken = condition.withLock {
            guard !ended else { return false }
            jobs.append(job)
            condition.signal()
            return true
        }
        if !taken { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }

    /// Lets the thread end once it has run the jobs it holds; it never blocks the caller.
    package func finish() {
        condition.withLock {
            finishing = true
            condition.signal()
        }
    }

    private func run() {
        while let job = next() {
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    private func next() -> UnownedJob? {
        condition.withLock {
            while jobs.isEmpty && !finishing { condition.wait() }
            guard !jobs.isEmpty else {
                ended = true
                return nil
            }
            return jobs.removeFirst()
        }
    }
}
