public import AppStoreGroups
import GroupDecisions
import GroupPolicy

/// Invalidations of one customer or of every customer: the answers forgotten and the counts
/// that refuse the writes begun before them set to fresh values.
extension RedisGroupsCache {
    /// Forgets the answers kept for a customer, in every environment, and counts an invalidation
    /// of the customer in each, in one script (see ``invalidationGenerationLifetime``).
    ///
    /// - Parameter customerID: The id the customer's decisions are asked with.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`.
    public func invalidate(anyTransactionID customerID: String) async throws(AppStoreGroupsError) {
        let environments = StoreEnvironment.allCases
        let keys =
            environments.map { answerKey(customerID, $0) } + environments.map { generationKey(customerID, $0) }
            + [invalidationCountKey]
        let arguments =
            [Array("EVAL".utf8), Self.invalidateScript, Array(String(keys.count).utf8)] + keys
            + [
                Array(String(Self.milliseconds(Self.invalidationGenerationLifetime)).utf8),
                Self.freshInvalidationCount(),
            ]
        switch try await call(arguments, "EVAL invalidate") {
        case .integer: return
        case let other: throw unexpected(other, "EVAL invalidate")
        }
    }

    /// The most `SCAN` calls one ``invalidateAll()`` makes: 100 million key slots at 1,000 a
    /// call, far more than a store of answers holds.
    static let maximumScanCalls = 100_000

    /// Counts an invalidation of every customer (everyone's count set to a fresh random value, never
    /// one a write could have read), then forgets every answer under the prefix
    /// (`SCAN` then `UNLINK`, a batch at a time), then sets the invalidation count
    /// (``invalidationCount()``) to a fresh random value.
    ///
    /// Answers fetched after it began may survive; each call of it has its own timeout, and a walk
    /// longer than 100,000 `SCAN` calls (a server whose cursor never returns to 0) fails.
    ///
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`.
    public func invalidateAll() async throws(AppStoreGroupsError) {
        // Counted first: a write that began before it is refused from here on, and whatever the walk
        // below misses was fetched after it.
        let fresh = Self.freshInvalidationCount()
        switch try await call([Array("SET".utf8), allGenerationKey, fresh], "SET generation-all") {
        case .simple: break
        case let other: throw unexpected(other, "SET generation-all")
        }
        var cursor: [UInt8] = Array("0".utf8)
        var calls = 0
        repeat {
            // A server whose cursor never comes back to 0 must not keep this loop going forever.
            calls += 1
            guard calls <= Self.maximumScanCalls else {
                throw AppStoreGroupsError(
                    code: .sharedCacheFailure,
                    message: "\(server): SCAN answers: did not finish within \(Self.maximumScanCalls) calls"
                )
            }
            let reply = try await call(
                [
                    Array("SCAN".utf8), cursor, Array("MATCH".utf8), answerPattern, Array("COUNT".utf8),
                    Array("1000".utf8),
                ],
                "SCAN answers"
            )
            guard case .array(let parts?) = reply, parts.count == 2, case .bulk(let next?) = parts[0],
                case .array(let keys?) = parts[1]
            else { throw unexpected(reply, "SCAN answers") }
            var batch: [[UInt8]] = []
            for key in keys {
                guard case .bulk(let name?) = key else { throw unexpected(reply, "SCAN answers") }
                // The pattern also matches the keys of a prefix that extends this one with `:`
                // (`<prefix>:x:sandbox:groups:c1`): only this prefix's own answer keys go.
                if isAnswerKey(name) { batch.append(name) }
            }
            if !batch.isEmpty {
                let removed = try await call([Array("UNLINK".utf8)] + batch, "UNLINK answers")
                guard case .integer = removed else { throw unexpected(removed, "UNLINK answers") }
            }
            cursor = next
        } while cursor != Array("0".utf8)
        // Counted last: a process that reads the new count reads the shared cache after every
        // answer went.
        let count = [
            Array("EVAL".utf8), Self.countInvalidationScript, Array("1".utf8), invalidationCountKey,
            Self.freshInvalidationCount(),
        ]
        switch try await call(count, "EVAL count-invalidation") {
        case .integer: break
        case let other: throw unexpected(other, "EVAL count-invalidation")
        }
    }
}
