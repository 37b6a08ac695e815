public import Foundation
public import GroupPolicy
import GroupPolicyBasics

/// A ``GroupDecisionService`` answer: the Decision, how fresh the groups it was made from are, and
/// the policy revision that made it.
///
/// The `Decision` says only what the policy decided; what the service knows about serving it is
/// here, and ``jsonBytes(includingProvenance:pretty:)`` writes both: the Decision's JSON followed by
/// `groupsSource`, `groupsFetchedAt`, `policyRevision` and `decisionId` (see the GroupPolicy
/// article "Decision JSON", section "Freshness and revision").
///
/// Every answer has a ``decisionID`` of its own, also written in its decision-log line, so a support
/// ticket quoting it finds the one record of that decision (see <doc:ObservingDecisions>).
public struct ServedDecision: Sendable {
    /// Where the customer's groups came from: `live`, `cache` or `stale`.
    public struct Source: Sendable, Hashable, CustomStringConvertible {
        /// `live`, `cache` or `stale`.
        public let name: String

        private init(name: String) {
            self.name = name
        }

        /// Fetched from Apple for this decision (or for a concurrent one it joined).
        public static let live = Source(name: "live")
        /// A cached answer within its time to live.
        public static let cache = Source(name: "cache")
        /// A cached answer past its time to live (within the maximum age), served because the
        /// budget had no token to spare for refreshing it, or because fetching a fresh one failed
        /// (``ServedDecision/staleReason`` says which).
        public static let stale = Source(name: "stale")

        /// The source's name.
        public var description: String { name }
    }

    /// Why an answer past its time to live was served: `budget` or `error` (see
    /// ``GroupDecisionEvent/StaleReason``).
    public typealias StaleReason = GroupDecisionEvent.StaleReason

    /// The customer's capabilities, groups and workspaces under the policy serving at the time.
    public let decision: Decision
    /// Where the groups came from.
    public let source: Source
    /// When Apple's answer was received.
    public let fetchedAt: Date
    /// The customer's groups the Decision was made from.
    public let groups: GetCustomerGroupsResponse
    /// The policy (the store's snapshot) that made the Decision: explain a capability with it and
    /// ``groups`` to get the same answer, whatever reloads happened since.
    public let policy: Policy
    /// The decision's own id: a UUIDv7 (RFC 9562) such as `019d1b7e-5a3c-7b21-8f4e-2c9a61d0b7f3`,
    /// lowercase, unique across the fleet and ordered by the time it was made; the `decisionId` of
    /// the JSON and of the decision-log line.
    public let decisionID: String
    /// Why a stale answer was served; `nil` unless ``source`` is ``Source/stale``.
    public let staleReason: StaleReason?
    /// How old a stale answer was when the decision was made (from ``fetchedAt``, in whole
    /// milliseconds, at most the service's maximum age); `nil` unless ``source`` is
    /// ``Source/stale``.
    public let age: Duration?

    /// Creates an answer; without a `decisionID`, it takes a new UUIDv7 from this process's
    /// generator, later than every id it gave before.
    public init(
        decision: Decision,
        source: Source,
        fetchedAt: Date,
        groups: GetCustomerGroupsResponse,
        policy: Policy,
        decisionID: String? = nil,
        staleReason: StaleReason? = nil,
        age: Duration? = nil
    ) {
        self.decision = decision
        self.source = source
        self.fetchedAt = fetchedAt
        self.groups = groups
        self.policy = policy
        self.decisionID = decisionID ?? DecisionIDGenerator.shared.next()
        self.staleReason = staleReason
        self.age = age
    }

    /// The revision of the policy set that made the Decision (`Policy.revision`).
    public var policyRevision: String { policy.revision }

    /// The Decision's JSON (`Decision.jsonBytes(includingProvenance:pretty:)`) followed by
    /// `groupsSource`, `groupsFetchedAt` (RFC 3339 in UTC with milliseconds), `policyRevision` and
    /// `decisionId` (``decisionID``); for a stale answer only, then `groupsStaleReason`
    /// (``staleReason``: `budget` or `error`) and `groupsAgeMilliseconds` (``age``, a whole
    /// number, when known).
    ///
    /// - Parameters:
    ///   - includingProvenance: Whether to include `grants` and `denials`.
    ///   - pretty: Pretty (two-space indentation) or compact.
    /// - Returns: The JSON as UTF-8 bytes, without a trailing newline.
    public func jsonBytes(includingProvenance: Bool = false, pretty: Bool = true) -> [UInt8] {
        var members = [
            ("groupsSource", source.name),
            ("groupsFetchedAt", Timestamp.rfc3339(fetchedAt)),
            ("policyRevision", policyRevision),
            ("decisionId", decisionID),
        ]
        if source == .stale, let staleReason { members.append(("groupsStaleReason", staleReason.name)) }
        let bytes = decision.jsonBytes(
            includingProvenance: includingProvenance,
            pretty: pretty,
            trailingMembers: members
        )
        guard source == .stale, let age else { return bytes }
        // A number, so written here: the Decision's trailing members are strings. The document ends
        // with its closing brace, on a line of its own when pretty.
        let closing = pretty ? 2 : 1
        let member =
            (pretty ? ",\n  \"groupsAgeMilliseconds\": " : ",\"groupsAgeMilliseconds\":")
            + String(age.wholeMilliseconds)
        return Array(bytes[..<(bytes.count - closing)]) + Array(member.utf8) + Array(bytes[(bytes.count - closing)...])
    }

    /// ``jsonBytes(includingProvenance:pretty:)`` as a string.
    ///
    /// - Parameters:
    ///   - includingProvenance: Whether to include `grants` and `denials`.
    ///   - pretty: Pretty (two-space indentation) or compact.
    /// - Returns: The JSON text, without a trailing newline.
    public func jsonString(includingProvenance: Bool = false, pretty: Bool = true) -> String {
        String(decoding: jsonBytes(includingProvenance: includingProvenance, pretty: pretty), as: UTF8.self)
    }
}
