package import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsRedis
package import GroupDecisionsTesting
package import GroupPolicy
import Testing

/// A ``StaticGroupsSource`` whose calls can be held: while the gate is closed, a call reads the
/// answer it will give (the state at the time Apple received the request), records that it
/// started, and waits for ``open()``.
package final class GatedGroupsSource: GroupsSource, @unchecked Sendable {
    package let inner: StaticGroupsSource
    private let lock = NSLock()
    private var closed = false
    private var started = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init(_ inner: StaticGroupsSource) { self.inner = inner }

    /// Holds every call from now on until ``open()``.
    package func close() { lock.withLock { closed = true } }

    /// Releases the held calls, and lets later ones through.
    package func open() {
        let released = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            closed = false
            defer { waiting = [] }
            return waiting
        }
        for continuation in released { continuation.resume() }
    }

    /// How many calls have reached the source.
    package var startedCalls: Int { lock.withLock { started } }

    /// Waits until `count` calls reached the source.
    package func waitForCalls(_ count: Int) async throws {
        try await waitUntil { startedCalls >= count }
    }

    package func customerGroups(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> GetCustomerGroupsResponse {
        // Apple answers with its state when the request arrives.
        let answer: Result<GetCustomerGroupsResponse, AppStoreGroupsError>
        do {
            answer = .success(
                try await inner.customerGroups(anyTransactionID: anyTransactionID, environment: environment)
            )
        } catch {
            answer = .failure(error)
        }
        await withCheckedContinuation { continuation in
            let hold = lock.withLock { () -> Bool in
                started += 1
                if closed { waiting.append(continuation) }
                return closed
            }
            if !hold { continuation.resume() }
        }
        return try answer.get()
    }
}
