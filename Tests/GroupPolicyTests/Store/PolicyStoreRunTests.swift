import Foundation
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

/// The store's lifecycle: `run()` stops when its task is cancelled, and reload handlers hear every
/// reload attempt, whoever made it.
@Suite struct PolicyStoreRunTests {
    /// A day's interval: a run that waited it out would meet the time limit; the measured time is
    /// compared with the interval, not with how fast a busy machine resumes the test.
    @Test(.timeLimit(.minutes(60))) func runStopsWithinOneIntervalOfCancellation() async throws {
        let (directory, _) = try PolicyStoreTests.directory(with: PolicyStoreTests.versionA)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // An interval far longer than the test may wait: cancellation must not wait it out.
        let store = try PolicyStore(contentsOf: directory, reloadInterval: .seconds(86_400))
        #expect(store.reloadInterval == .seconds(86_400))
        let started = ContinuousClock.now
        let runner = Task.detached { try await store.run() }
        try await Task.sleep(for: .milliseconds(50))
        runner.cancel()
        await #expect(throws: CancellationError.self) { try await runner.value }
        #expect(ContinuousClock.now - started < .seconds(86_400))
    }

    @Test func defaultAndShortestIntervals() throws {
        let (directory, _) = try PolicyStoreTests.directory(with: PolicyStoreTests.versionA)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try PolicyStore(contentsOf: directory).reloadInterval == .seconds(5))
        #expect(try PolicyStore(contentsOf: directory, reloadInterval: .zero).reloadInterval == .milliseconds(10))
    }

    @Test func handlersHearEveryReloadWithTheRevisionServingAfterIt() throws {
        let (directory, file) = try PolicyStoreTests.directory(with: PolicyStoreTests.versionA)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try PolicyStore(contentsOf: directory)
        let heard = Shared<[String]>([])
        let id = store.addReloadHandler { outcome, revision in
            switch outcome {
            case .reloaded(let generation): heard.value.withLock { $0.append("reloaded \(generation) \(revision)") }
            case .failed(let error): heard.value.withLock { $0.append("failed \(error.code) \(revision)") }
            }
        }
        try PolicyStoreTests.write(PolicyStoreTests.versionB, to: file)
        _ = store.reloadIfChanged()
        let revisionB = store.revision
        #expect(store.reloadIfChanged() == nil)
        try PolicyStoreTests.write(PolicyStoreTests.broken, to: file)
        _ = store.reload()
        store.removeReloadHandler(id)
        _ = store.reload()
        #expect(heard.value.withLock { $0 } == ["reloaded 2 \(revisionB)", "failed invalid-policy \(revisionB)"])
    }
}
