import Dispatch
import GroupPolicyBasics

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
/// ``run()`` reloads whenever the files change, every ``reloadInterval``, until its task is
/// cancelled; functions added with ``addReloadHandler(_:)`` hear every reload attempt, whoever made
/// it.
///
/// ```swift
/// let store = try PolicyStore(contentsOf: "Policies")
/// let decision = store.evaluate(response, in: context)   // on every request
/// try await store.run()                                  // in a background task: reloads on change
/// ```
public final class PolicyStore: Sendable {
    /// The outcome of one reload attempt.
    public enum ReloadOutcome: Sendable {
        /// The new version loaded and now serves; `generation` counts successful loads from 1.
        case reloaded(generation: Int)
        /// The files did not load; the previous version keeps serving.
        case failed(GroupPolicyError)
    }

    /// Identifies a function added with ``PolicyStore/addReloadHandler(_:)``, to remove it.
    public struct ReloadHandlerID: Sendable, Hashable {
        fileprivate let value: Int
    }

    /// A function told of each reload attempt: its outcome, and the revision serving after it (the
    /// new version's, or the one that keeps serving after a failure).
    public typealias ReloadHandler = @Sendable (_ outcome: ReloadOutcome, _ revision: String) -> Void

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
    /// How often ``run()`` looks at the files.
    public let reloadInterval: Duration
    private let state: Locked<State>
    /// Serializes reloads, so that two concurrent reloads cannot swap in an older version last.
    private let reloading = Locked<Bool>(false)
    /// The functions told of reloads, and the next id to hand out.
    private let handlers = Locked<(next: Int, list: [(id: Int, handler: ReloadHandler)])>((0, []))

    /// The shortest ``reloadInterval``: a shorter one is taken as this.
    public static let minimumReloadInterval: Duration = .milliseconds(10)

    /// Loads the policy (a file) or policy set (a directory) at `path`.
    ///
    /// - Parameters:
    ///   - path: A policy file, or a directory of policy files.
    ///   - limits: Bounds applied to this and every later load.
    ///   - reloadInterval: How often ``run()`` looks at the files. Default 5 seconds; at least
    ///     ``minimumReloadInterval``.
    /// - Throws: The ``GroupPolicyError`` of the first load: a store never starts without a policy.
    public init(
        contentsOf path: String,
        limits: PolicyLimits = .default,
        reloadInterval: Duration = .seconds(5)
    ) throws(GroupPolicyError) {
        self.path = path
        self.limits = limits
        self.reloadInterval = max(reloadInterval, Self.minimumReloadInterval)
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
        let (outcome, revision) = reloading.withLock { _ in
            let outcome = load()
            return (outcome, current.revision)
        }
        for entry in handlers.withLock({ $0.list }) { entry.handler(outcome, revision) }
        return outcome
    }

    /// One load attempt, swapped in when it succeeds; the caller holds the reload lock.
    private func load() -> ReloadOutcome {
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
            state.withLock { state in
                state.lastFailure = error
                // Remember the broken files, so that run() does not retry them until they change.
                state.fingerprint = fingerprint
            }
            return .failed(error)
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

    /// Reloads whenever the files change, looking every ``reloadInterval``, until the task running
    /// it is cancelled.
    ///
    /// It needs no actor and no thread of the caller's: run it in a task group, a detached task or
    /// a service group. Loading runs on a Dispatch thread, so a large policy set does not hold one of
    /// the cooperative threads request handlers need. A reload that fails keeps the old version
    /// serving; every attempt reaches the functions added with ``addReloadHandler(_:)``.
    ///
    /// - Throws: `CancellationError` when its task is cancelled: at once while it waits, or when the
    ///   load under way finishes.
    public func run() async throws {
        while true {
            try await Task.sleep(for: reloadInterval)
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                DispatchQueue.global(qos: .utility).async {
                    self.reloadIfChanged()
                    continuation.resume()
                }
            }
            try Task.checkCancellation()
        }
    }

    /// Adds a function told of every reload attempt from now on (by ``run()``, ``reload()`` or
    /// ``reloadIfChanged()``), with its outcome and the revision serving after it.
    ///
    /// It is called on the thread that reloaded, after the new version serves, and must return
    /// quickly; it may read the store but should not reload it. A decision service adds one to tell
    /// its observer.
    ///
    /// - Parameter handler: Called after each reload attempt.
    /// - Returns: What ``removeReloadHandler(_:)`` takes to remove it.
    @discardableResult
    public func addReloadHandler(_ handler: @escaping ReloadHandler) -> ReloadHandlerID {
        handlers.withLock { handlers in
            handlers.next += 1
            handlers.list.append((handlers.next, handler))
            return ReloadHandlerID(value: handlers.next)
        }
    }

    /// Removes a function added with ``addReloadHandler(_:)``; does nothing when it is gone already.
    ///
    /// - Parameter id: What ``addReloadHandler(_:)`` returned.
    public func removeReloadHandler(_ id: ReloadHandlerID) {
        handlers.withLock { handlers in handlers.list.removeAll { $0.id == id.value } }
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
            FileStamp(path: file, realPath: GroupPolicyBasics.realPath(file), status: try? FileStatus(path: file))
        }
    }
}
