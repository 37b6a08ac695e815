public import GroupPolicy

#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// A ``GroupDecisionService`` answer: the Decision, and how fresh the groups it was made from are.
public struct ServedDecision: Sendable {
    /// Where the customer's groups came from.
    public struct Source: Sendable, Hashable, CustomStringConvertible {
        /// `live`, `cache` or `stale`.
        public let name: String

        private init(name: String) {
            self.name = name
        }

        /// Fetched from Apple for this call (or for a concurrent call it joined).
        public static let live = Source(name: "live")
        /// A cached answer within its time to live, from this process or the shared store.
        public static let cache = Source(name: "cache")
        /// A cached answer past its time to live, served because fetching failed and the
        /// stale-if-error window had not closed.
        public static let stale = Source(name: "stale")

        /// The source's name.
        public var description: String { name }
    }

    /// The customer's capabilities, groups and workspaces under the policy serving at the time.
    public let decision: Decision
    /// Where the groups came from.
    public let source: Source
    /// When Apple's answer was received.
    public let fetchedAt: Date

    /// Creates an answer.
    ///
    /// - Parameters:
    ///   - decision: The Decision.
    ///   - source: Where the groups came from.
    ///   - fetchedAt: When Apple's answer was received.
    public init(decision: Decision, source: Source, fetchedAt: Date) {
        self.decision = decision
        self.source = source
        self.fetchedAt = fetchedAt
    }
}
