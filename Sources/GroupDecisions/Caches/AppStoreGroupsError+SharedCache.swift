public import AppStoreGroups

extension AppStoreGroupsError.Code {
    /// A shared cache failed: it could not be reached, timed out, or answered something other than
    /// what was asked for.
    ///
    /// The serving layer's own code, defined here rather than in the client's module, which names
    /// no cache. The shared-cache requirements throw `AppStoreGroupsError` with it, so a store
    /// written for an earlier version compiles unchanged. Its description is `store-failure`, the
    /// name it always had, so logs and served error JSON keep their bytes.
    public static let sharedCacheFailure = Self(identifier: "store-failure")
}
