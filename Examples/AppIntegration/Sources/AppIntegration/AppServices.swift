public import AppStoreGroups
public import GroupDecisions
public import GroupPolicy

/// The app's background work beside its server: the policies' reloads and the decision service's
/// sweeping, in one task group.
///
/// With swift-service-lifecycle the app would instead conform both to `Service` (one line each:
/// `extension PolicyStore: @retroactive Service {}`) and hand them to its `ServiceGroup`; this
/// package keeps to the toolchain.
public enum AppServices {
    /// Runs `server` with the policies reloading and the service sweeping beside it; when `server`
    /// returns, the background work stops, and when the calling task is cancelled, everything does.
    ///
    /// - Parameters:
    ///   - policies: The policies, reloaded when their files change.
    ///   - decisions: The decision service.
    ///   - server: The app's own serving loop.
    /// - Throws: What `server` throws; `CancellationError` when cancelled.
    public static func run(
        policies: PolicyStore,
        decisions: GroupDecisionService,
        server: @escaping @Sendable () async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await policies.run() }
            group.addTask { try await decisions.run() }
            try await server()
            group.cancelAll()
        }
    }
}
