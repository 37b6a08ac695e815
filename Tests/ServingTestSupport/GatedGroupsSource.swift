package import AppStoreGroups
import GroupDecisions
package import GroupDecisionsTesting
package import GroupPolicy
import Synchronization
import Testing

/// A ``StaticGroupsSource`` whose calls can be held: while the gate is closed, a call reads the answer it will give
/// (the state at the time Apple received the request), records that it started, and waits for ``open()``.
package final class GatedGroupsSource: GroupsSource, Sendable {
    package let inner: StaticGroupsSource
    /// The gate calls wait at while closed, the one id held (every id when `nil`), and how many calls have started.
    private let state = Mutex<(gate: Gate?, held: String?, started: Int)>((nil, nil, 0))

    package init(_ inner: StaticGroupsSource) { self.inner = inner }

    /// Holds every call from now on, or only those for `id`, until ``open()``.
    package func close(holding id: String? = nil) {
        state.withLock { state in
            state.gate = state.gate ?? Gate()
            state.held = id
        }
    }

    /// Releases the held calls, and lets later ones through.
    package func open() {
        state.withLock { state in
            defer { state.gate = nil }
            return state.gate
        }?
        .open()
    }

    /// Releases the held calls, and holds later ones until ``open()``.
    package func release() {
        state.withLock { state in
            defer { state.gate = Gate() }
            return state.gate
        }?
        .open()
    }

    /// How many calls have reached the source.
    package var startedCalls: Int { state.withLock { $0.started } }

    /// Waits until `count` calls reached the source.
    package func waitForCalls(_ count: Int) async throws {
        try await waitUntil { startedCalls >= count }
    }

    package func customerGroups(
        anyTransactionID id: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> GetCustomerGroupsResponse {
        // Apple answers with its state when the request arrives.
        let answer: Result<GetCustomerGroupsResponse, AppStoreGroupsError>
        do {
            answer = .success(try await inner.customerGroups(anyTransactionID: id, environment: environment))
        } catch {
            answer = .failure(error)
        }
        let gate = state.withLock { state in
            state.started += 1
            return state.held == nil || state.held == id ? state.gate : nil
        }
        await gate?.wait()
        return try answer.get()
    }
}
