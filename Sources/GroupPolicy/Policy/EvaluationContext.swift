/// What the app knows besides the groups response: the environment, and the entitlements it derived
/// itself from verified transactions (plain strings, normally product ids).
///
/// GroupPolicy never infers an entitlement from a group or a role; `content` capabilities are
/// granted only through rules that require entitlements listed here.
public struct EvaluationContext: Sendable, Hashable {
    /// Where the response came from.
    ///
    /// Default `production`.
    public var environment: StoreEnvironment
    /// Entitlements from verified transactions.
    ///
    /// Default none.
    public var entitlements: Set<String>

    /// Creates a context; the defaults are Production with no entitlements.
    public init(environment: StoreEnvironment = .production, entitlements: Set<String> = []) {
        self.environment = environment
        self.entitlements = entitlements
    }
}
