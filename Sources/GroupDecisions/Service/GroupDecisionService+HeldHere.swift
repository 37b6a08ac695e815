public import AppStoreGroups
public import GroupPolicy

/// The synchronous half of ``GroupDecisionService/decision(anyTransactionID:entitlements:environment:)``:
/// what a server can answer on its event loop, without a task.
extension GroupDecisionService {
    /// The customer's Decision when this process holds a fresh copy that may be served now,
    /// without suspending; `nil` otherwise.
    ///
    /// The same hit as ``decision(anyTransactionID:entitlements:environment:)``'s first step (one
    /// clock read, one lookup, and with a shared cache one look at the invalidation count read
    /// last), observed, compared with the candidate policy and logged as that one is. `nil` means
    /// nothing was decided and nothing recorded: call the async method, which goes on from the
    /// same lookup (a miss, or a copy the count must confirm first). Its parameters are the async
    /// method's.
    ///
    /// - Returns: The Decision served from this process's copy, or `nil`.
    /// - Throws: `AppStoreGroupsError.Code.transactionIDNotFound` for a fresh negative answer held
    ///   here (recorded as the async method records it).
    public func decisionIfHeldHere(
        anyTransactionID: String,
        entitlements: Set<String> = [],
        environment: StoreEnvironment
    ) throws(AppStoreGroupsError) -> ServedDecision? {
        let lookup: LocalCopies.LocalLookup
        do {
            lookup = try copies.cached(anyTransactionID, in: environment)
        } catch {
            recordRefusal(anyTransactionID, in: environment, error: error)
            throw error
        }
        guard case .hit(let loaded) = lookup else { return nil }
        return serve(loaded, anyTransactionID: anyTransactionID, entitlements: entitlements, environment: environment)
    }
}
