#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A policy shared by every request of a server, reloadable from its files without a restart.
///
/// Readers take the current ``Policy`` (an immutable snapshot) and evaluate it outside any lock, so
/// a reload never blocks them and never shows them a mix of two versions. ``reload()`` loads and
/// validates the new version completely, then swaps it in atomically; when the new files do not
/// load, the old version keeps serving and the failure is returned and kept in ``lastFailure``.
///
/// ```swift
/// let store = try PolicyStore(contentsOf: "Policies")
/// let decision = store.evaluate(response, in: context)   // on every request
/// try await store.watch(every: .seconds(5))             // in a background task: reloads on change
/// ```
public final class PolicyStore: Sendable {
    /// The outcome of one reload attempt.
    public enum ReloadOutcome: Sendable {
        /// The new version loaded and now serves; `generation` counts successful loads from 1.
        case reloaded(generation: Int)
        /// The files did not load; the previous version keeps serving.
        case failed(GroupPolicyError)
    }

    private struct State: Sendable {
        var policy: Policy
        var generation: Int
        var lastFailure: GroupPolicyError?
        var fingerprint: [FileStamp]
    }

    /// The file or directory the store loads from.
    public let path: String
    /// The limits applied to every load.
    public let limits: PolicyLimits
    private let state: Locked<State>
    /// Serializes reloads, so that two concurrent reloads cannot swap in an older version last.
    private let reloading = Locked<Bool>(false)

    /// Loads the policy (a file) or policy set (a directory) at `path`.
    ///
    /// - Parameters:
    ///   - path: A policy file, or a directory of policy files.
    ///   - limits: Bounds applied to this and every later load.
    /// - Throws: The ``GroupPolicyError`` of the first load: a store never starts without a policy.
    public init(contentsOf path: String, limits: PolicyLimits = .default) throws(GroupPolicyError) {
        self.path = path
        self.limits = limits
        let fingerprint = FileStamp.fingerprint(of: path)
        let policy = try Policy(contentsOf: path, limits: limits)
        state = Locked(State(policy: policy, generation: 1, lastFailure: nil, fingerprint: fingerprint))
    }

    /// The policy serving now: an immutable snapshot, safe to keep for the rest of a request.
    public var current: Policy { state.withLock { $0.policy } }

    /// The revision of the version serving now (``Policy/revision``); it changes with every reload
    /// that changes a file's name or bytes.
    public var revision: String { current.revision }

    /// How many versions have loaded successfully, counting the first.
    public var generation: Int { state.withLock { $0.generation } }

    /// Why the latest reload failed, or `nil` when it succeeded (or none was attempted).
    public var lastFailure: GroupPolicyError? { state.withLock { $0.lastFailure } }

    /// Evaluates with the current policy (see ``Policy/evaluate(_:in:)``).
    ///
    /// - Parameters:
    ///   - response: Apple's Get Customer Groups answer for the customer.
    ///   - context: The environment and the entitlements the app derived from transactions.
    /// - Returns: The decision of the version serving at the time of the call.
    public func evaluate(
        _ response: GetCustomerGroupsResponse,
        in context: EvaluationContext = EvaluationContext()
    )
        -> Decision
    {
        current.evaluate(response, in: context)
    }

    /// The customer's capabilities with the current policy (see ``Policy/capabilities(for:in:)``).
    ///
    /// - Parameters:
    ///   - response: Apple's Get Customer Groups answer for the customer.
    ///   - context: The environment and the entitlements the app derived from transactions.
    /// - Returns: The capabilities under the version serving at the time of the call.
    public func capabilities(
        for response: GetCustomerGroupsResponse,
        in context: EvaluationContext = EvaluationContext()
    ) -> CapabilitySet {
        current.capabilities(for: response, in: context)
    }

    /// Explains one capability with the current policy (see
    /// ``Policy/explain(_:for:in:group:)``).
    ///
    /// - Parameters:
    ///   - capability: A capability the current policy declares.
    ///   - response: Apple's Get Customer Groups answer for the customer.
    ///   - context: The environment and the entitlements the app derived from transactions.
    ///   - groupID: Explain only this group of the response; `nil` explains every group.
    /// - Returns: The explanation under the version serving at the time of the call.
    /// - Throws: A ``GroupPolicyError`` with code `undeclaredCapability` or `unknownGroup`.
    public func explain(
        _ capability: Capability,
        for response: GetCustomerGroupsResponse,
        in context: EvaluationContext = EvaluationContext(),
        group groupID: String? = nil
    ) throws(GroupPolicyError) -> Explanation {
        try current.explain(capability, for: response, in: context, group: groupID)
    }

    /// Loads the files again; swaps the new version in only if it loads completely.
    ///
    /// - Returns: `.reloaded` with the new generation, or `.failed` with why (the old version
    ///   keeps serving).
    @discardableResult
    public func reload() -> ReloadOutcome {
        reloading.withLock { _ in
            let fingerprint = FileStamp.fingerprint(of: path)
            do {
                let policy = try Policy(contentsOf: path, limits: limits)
                let generation = state.withLock { state in
                    state.policy = policy
                    state.generation += 1
                    state.lastFailure = nil
                    state.fingerprint = fingerprint
                    return state.generation
                }
                return .reloaded(generation: generation)
            } catch {
                let failure =
                    error as? GroupPolicyError
                    ?? GroupPolicyError(code: .unreadableFile, message: "\(error)")
                state.withLock { state in
                    state.lastFailure = failure
                    // Remember the broken files, so a watcher does not retry them until they change.
                    state.fingerprint = fingerprint
                }
                return .failed(failure)
            }
        }
    }

    /// Reloads when the files changed since the last load attempt (their names, the files their
    /// links resolve to, sizes or modification times), and otherwise does nothing.
    ///
    /// - Returns: The outcome of the reload, or `nil` when nothing changed.
    @discardableResult
    public func reloadIfChanged() -> ReloadOutcome? {
        let fingerprint = FileStamp.fingerprint(of: path)
        guard state.withLock({ $0.fingerprint != fingerprint }) else { return nil }
        return reload()
    }

    /// Polls the files and reloads when they change, until the calling task is cancelled.
    ///
    /// Run it in a background task of your server; a failed reload keeps the old version serving
    /// and is reported to `onReload`.
    ///
    /// - Parameters:
    ///   - interval: How often to look at the files.
    ///   - onReload: Called after each reload attempt, for logging.
    public func watch(
        every interval: Duration,
        onReload: (@Sendable (ReloadOutcome) -> Void)? = nil
    ) async {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            if let outcome = reloadIfChanged() { onReload?(outcome) }
        }
    }
}

/// What identifies a version of the policy files cheaply: each file's path, the real file it
/// resolves to, and that file's identity, size and modification time.
///
/// Everything is read through symbolic links (`stat`, not `lstat`), so a deployment that swaps a
/// link, as a Kubernetes ConfigMap volume swaps `..data` to a new timestamped directory, changes
/// the fingerprint even when the new file has the same size and time as the old one.
struct FileStamp: Equatable, Sendable {
    var path: String
    var realPath: String?
    var status: FileStatus?

    static func fingerprint(of path: String) -> [FileStamp] {
        let files = isDirectory(path) ? ((try? PolicyFiles.policySet(inDirectory: path)) ?? []) : [path]
        return files.map { file in
            FileStamp(path: file, realPath: GroupPolicy.realPath(file), status: try? FileStatus(path: file))
        }
    }
}
