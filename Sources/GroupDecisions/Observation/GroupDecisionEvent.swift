public import AppStoreGroups
public import Foundation
public import GroupPolicy

/// What a ``GroupDecisionObserver`` is told: one struct per event, made by the service.
///
/// Fields may be added to any event; none carries a customer id.
public enum GroupDecisionEvent {
    /// A decision served from a cached answer within its time to live.
    public struct CacheHit: Sendable {
        /// The environment of the decision.
        public let environment: StoreEnvironment
        /// When Apple's answer was fetched.
        public let fetchedAt: Date
        /// Whether the answer came from the shared cache rather than this process's.
        public let fromSharedCache: Bool
    }

    /// No fresh answer in this process's cache.
    public struct CacheMiss: Sendable {
        /// The environment of the decision.
        public let environment: StoreEnvironment
    }

    /// Why an answer past its time to live was served: `budget` or `error`.
    public struct StaleReason: Sendable, Hashable, CustomStringConvertible {
        /// `budget` or `error`.
        public let name: String

        private init(name: String) {
            self.name = name
        }

        /// The rate budget had no token to spare for a refresh (none banked beyond the reserve kept
        /// for first fetches, or a `Retry-After` instant holding): nothing was sent.
        public static let budget = StaleReason(name: "budget")
        /// A fetch was sent and failed, within the stale-if-error window.
        public static let error = StaleReason(name: "error")

        /// The reason's name.
        public var description: String { name }
    }

    /// An answer past its time to live, within the maximum age, served because the budget had no
    /// token to spare for refreshing it or because a fetch failed.
    public struct StaleServed: Sendable {
        /// The environment of the decision.
        public let environment: StoreEnvironment
        /// When the served answer was fetched.
        public let fetchedAt: Date
        /// Why the fetch failed, or (``reason`` `budget`) why the refresh was not sent: a
        /// `AppStoreGroupsError.Code.rateLimitExceeded` without an HTTP status.
        public let error: AppStoreGroupsError
        /// Why the answer was served stale: the budget, or a failed fetch.
        public let reason: StaleReason
        /// How old the answer was when served.
        public let age: Duration
    }

    /// A request to Apple about to be sent.
    public struct FetchStarted: Sendable {
        /// The endpoint asked.
        public let endpoint: GroupsEndpoint
        /// The environment asked.
        public let environment: StoreEnvironment
    }

    /// A request to Apple that ended.
    public struct FetchFinished: Sendable {
        /// The endpoint asked.
        public let endpoint: GroupsEndpoint
        /// The environment asked.
        public let environment: StoreEnvironment
        /// From sending to the answer (or the failure), retries included.
        public let duration: Duration
        /// The HTTP status of the answer: 200 for success; `nil` when there was no answer (a
        /// timeout, a failed connection).
        public let httpStatus: Int?
        /// The failure, or `nil` for success.
        public let error: AppStoreGroupsError?
    }

    /// A 429: the gate is closed.
    public struct RateLimited: Sendable {
        /// The endpoint that answered 429.
        public let endpoint: GroupsEndpoint
        /// The environment it answered for.
        public let environment: StoreEnvironment
        /// The instant before which nothing goes to the endpoint: Apple's, cut to the longest hold.
        public let retryAfter: Date
        /// The instant Apple's `Retry-After` named, or `nil` when it named none that can be read.
        public let requestedRetryAfter: Date?
    }

    /// A call refused with nothing sent.
    public struct BudgetExhausted: Sendable {
        /// The endpoint the call was for.
        public let endpoint: GroupsEndpoint
        /// The environment the call was for.
        public let environment: StoreEnvironment
        /// When a request may go, as the refused call was told.
        public let retryAfter: Date?
        /// Whether a `Retry-After` instant held the call (otherwise the request budget did).
        public let heldByRetryAfter: Bool
    }

    /// The shared cache failed, or answered slowly too often, and is skipped for a while.
    public struct SharedCacheFailure: Sendable {
        /// What failed (customer ids in it replaced by `<customer>`).
        public let error: AppStoreGroupsError
        /// Whether the cache answered, but slower than the threshold, too many times in a row.
        public let slow: Bool
        /// How long reads skip the cache from now on.
        public let skippedFor: Duration
    }

    /// The shared cache answered after failing.
    public struct SharedCacheRecovery: Sendable {
        /// From its first failure to this answer.
        public let unavailableFor: Duration
    }

    /// Answers forgotten.
    public struct Invalidation: Sendable {
        /// Whether every customer's answers were forgotten, rather than one customer's.
        public let allCustomers: Bool
        /// The group whose members' answers were forgotten, or `nil` for one customer or all.
        public let groupID: String?
        /// Whether the shared cache took it, or `nil` without a shared cache.
        ///
        /// When `false`, the call threw and other processes keep the old answer.
        public let sharedCacheUpdated: Bool?
    }

    /// A new version of the policies serves.
    public struct PolicyReload: Sendable {
        /// The new version's revision (`Policy.revision`).
        public let revision: String
        /// How many versions have loaded, counting the first.
        public let generation: Int
    }

    /// Changed policy files that did not load.
    public struct PolicyReloadFailure: Sendable {
        /// Why they did not load.
        public let error: GroupPolicyError
        /// The revision that keeps serving.
        public let revision: String
    }
}
