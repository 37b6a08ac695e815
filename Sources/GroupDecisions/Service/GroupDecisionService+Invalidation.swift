public import AppStoreGroups

/// Invalidation: a customer's answers, or everyone's, forgotten here at once and in the shared cache.
extension GroupDecisionService {
    /// Forgets a customer's groups, here and in the shared cache.
    ///
    /// Call it from your App Store Server Notifications handler, and when Get Group Members answers
    /// `GroupNotFoundError` for a group the customer was in. This process forgets at once, and
    /// fetches under way are not kept; a failure of the shared cache is thrown (answer Apple's
    /// notification with an error, so that it comes again); once the shared cache took it, the call
    /// waits ``GroupDecisionService/Configuration/SharedCache/invalidationCheckInterval``, after
    /// which no process serves the old answer. See the article "Serving decisions at fleet scale",
    /// sections "Invalidation" and "Invalidation across the fleet".
    ///
    /// - Parameter anyTransactionID: The id the customer's decisions are asked with: 1 to 128
    ///   characters of `A-Z a-z 0-9 _ -`, checked before anything else is done (no customer's
    ///   decisions are asked with another).
    /// - Throws: `AppStoreGroupsError.Code.invalidArgument` for a malformed id (nothing forgotten);
    ///   `AppStoreGroupsError.Code.sharedCacheFailure` when the shared cache was not updated;
    ///   `AppStoreGroupsError.Code.cancelled` when the task was cancelled during the wait (the
    ///   shared cache was updated, but other processes may still serve their copies for the
    ///   interval).
    public func invalidate(anyTransactionID: String) async throws(AppStoreGroupsError) {
        try RequestValidation.checkIdentifier(anyTransactionID, name: "transaction id")
        flights.invalidate(customerID: anyTransactionID)
        local.remove(customerID: anyTransactionID)
        try await invalidateShared(allCustomers: false, groupID: nil, customerID: anyTransactionID) {
            cache throws(AppStoreGroupsError) in
            try await cache.invalidate(anyTransactionID: anyTransactionID)
        }
    }

    /// Forgets the groups of every customer whose answer holds the group, here and in the shared
    /// cache.
    ///
    /// Call it when a group changes as a whole (seats added or taken back, the group's purchase
    /// refunded or expired): you know the group, not every member's transaction id. A fetch under
    /// way is not kept when its answer holds the group; the shared cache forgets every customer it
    /// lists under the group and refuses an answer holding it fetched before (see the article
    /// "Serving decisions at fleet scale", section "Invalidation by group"). Errors as
    /// ``invalidate(anyTransactionID:)``.
    ///
    /// - Parameter groupID: The group's id as Apple's answers give it: any string, as the decoding
    ///   of Get Customer Groups takes any (Apple documents a group id as a string and no more), so
    ///   whatever a decision was granted from can be invalidated.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the shared cache was not updated;
    ///   `AppStoreGroupsError.Code.cancelled` when cancelled during the wait.
    public func invalidate(groupID: String) async throws(AppStoreGroupsError) {
        flights.invalidate(groupID: groupID)
        local.remove { $0.holds(groupID: groupID) }
        try await invalidateShared(allCustomers: false, groupID: groupID, customerID: nil) {
            cache throws(AppStoreGroupsError) in
            try await cache.invalidate(groupID: groupID)
        }
    }

    /// Forgets every customer's groups, here and in the shared cache.
    ///
    /// Returns, as ``invalidate(anyTransactionID:)`` does, once no process serves an old answer.
    ///
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` when the shared cache was not updated
    ///   (this process has forgotten them all the same; see ``invalidate(anyTransactionID:)``);
    ///   `AppStoreGroupsError.Code.cancelled` when cancelled during the wait.
    public func invalidateAll() async throws(AppStoreGroupsError) {
        flights.invalidateAll()
        local.removeAll()
        try await invalidateShared(allCustomers: true, groupID: nil, customerID: nil) {
            cache throws(AppStoreGroupsError) in
            try await cache.invalidateAll()
        }
    }

    private func invalidateShared(
        allCustomers: Bool,
        groupID: String?,
        customerID: String?,
        _ body: (any SharedInvalidations) async throws(AppStoreGroupsError) -> Void
    ) async throws(AppStoreGroupsError) {
        func tell(sharedCacheUpdated: Bool?) {
            let event = GroupDecisionEvent.Invalidation(
                allCustomers: allCustomers,
                groupID: groupID,
                sharedCacheUpdated: sharedCacheUpdated
            )
            observer.invalidated(event)
        }
        guard let shared = context.shared, let cache = shared.caches.invalidations else {
            return tell(sharedCacheUpdated: nil)
        }
        do {
            try await shared.write(customerID: customerID) { () throws(AppStoreGroupsError) in try await body(cache) }
        } catch {
            tell(sharedCacheUpdated: false)
            throw error
        }
        tell(sharedCacheUpdated: true)
        try await awaitOtherProcesses(shared, cache)
    }

    /// Waits until every process has read the invalidation count since it moved: one
    /// ``GroupDecisionService/Configuration/SharedCache/invalidationCheckInterval``, unless the shared cache keeps no count.
    private func awaitOtherProcesses(
        _ shared: SharedCacheGuard,
        _ cache: any SharedInvalidations
    ) async throws(AppStoreGroupsError) {
        guard let invalidations = context.invalidations, !invalidations.isUnsupported else { return }
        // Not known yet: asked once (a cache that keeps no count answers at once, without the store).
        if invalidations.stamp == nil,
            let count = await shared.read({ () throws(AppStoreGroupsError) in try await cache.invalidationCount() }),
            count == nil
        {
            invalidations.record(nil, started: timeSource.now())
            return
        }
        do {
            try await timeSource.sleep(configuration.sharedCache.invalidationCheckInterval)
        } catch {
            throw AppStoreGroupsError(
                code: .cancelled,
                message: "cancelled while waiting for the other processes to read the invalidation"
            )
        }
    }
}
