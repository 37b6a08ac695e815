public import AppStoreGroups
public import GroupDecisions
public import GroupPolicy

/// The customer's fetch lock: taken alone, or with what a fetch under it needs in the same script,
/// and released alone, or in the script that keeps the fetched answer.
extension RedisGroupsCache {
    /// Takes the lock with `SET NX PX`, or finds it already held by `owner`: sent twice (after a
    /// lost connection), it answers as it did the first time.
    private static let acquireScript = Array(
        """
        if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
        if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 end
        return 0
        """.utf8
    )

    /// Takes the customer's fetch lock (`SET key owner NX PX ms`, in a script that also answers
    /// yes when `owner` already holds it).
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    ///   - owner: A value unique to this attempt.
    ///   - timeToLive: When Redis drops the lock if it is not released.
    /// - Returns: Whether this caller now holds the lock.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`.
    public func acquireFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> Bool {
        let arguments = [
            Array("EVAL".utf8), Self.acquireScript, Array("1".utf8), lockKey(customerID, environment),
            Array(owner.utf8), Array(String(Self.milliseconds(timeToLive)).utf8),
        ]
        switch try await call(arguments, "EVAL acquire-lock") {
        case .integer(1): return true
        case .integer(0): return false
        case let other: throw unexpected(other, "EVAL acquire-lock")
        }
    }

    private static let releaseScript = Array(
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end".utf8
    )

    /// Releases the customer's fetch lock if `owner` still holds it (compare and delete, in one
    /// script).
    ///
    /// - Parameters:
    ///   - customerID: The customer whose lock to release.
    ///   - environment: The environment of the fetch.
    ///   - owner: The value the lock was taken with.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`.
    public func releaseFetchLock(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String
    ) async throws(AppStoreGroupsError) {
        let arguments = [
            Array("EVAL".utf8), Self.releaseScript, Array("1".utf8), lockKey(customerID, environment),
            Array(owner.utf8),
        ]
        switch try await call(arguments, "EVAL release-lock") {
        case .integer: return
        case let other: throw unexpected(other, "EVAL release-lock")
        }
    }

    /// Reads the answer (`KEYS[2]`) and the invalidation counts (the customer's `KEYS[3]`,
    /// everyone's `KEYS[4]`, the groups' `KEYS[5]`), then takes the lock `KEYS[1]` for owner
    /// `ARGV[1]` and `ARGV[2]` milliseconds, or finds it already held by that owner: answers
    /// `{taken, answer, customer, all, groups}`, a missing value as null.
    ///
    /// Everyone's count is created at the fresh value `ARGV[3]` when it is missing (see
    /// ``readGenerationScript``).
    ///
    /// The reads come first, so a step that fails (a key of the wrong type) fails before the lock is
    /// taken. Sent twice (after a lost connection), it answers as it did the first time.
    static let acquireAndReadScript = Array(
        """
        local answer = redis.call('GET', KEYS[2])
        if not redis.call('GET', KEYS[4]) then redis.call('SET', KEYS[4], ARGV[3]) end
        local counts = redis.call('MGET', KEYS[3], KEYS[4], KEYS[5])
        local taken = 0
        if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) or redis.call('GET', KEYS[1]) == ARGV[1] then
          taken = 1
        end
        return {taken, answer, counts[1], counts[2], counts[3]}
        """.utf8
    )

    /// Takes the customer's fetch lock when nobody else holds it, and reads the answer kept and the
    /// invalidation generation in the same script: one round trip.
    ///
    /// The answer is checked as ``answer(anyTransactionID:in:)`` checks it (a value not written for
    /// its key, or fetched further in the future than ``maximumClockSkew``, is no answer); a count
    /// that is not a number, or a reply of any other shape, is a store failure.
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    ///   - owner: A value unique to this attempt.
    ///   - timeToLive: When Redis drops the lock if it is not released.
    /// - Returns: Whether this caller now holds the lock, the answer kept, and the generation.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`.
    public func acquireFetchLockAndRead(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        owner: String,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) -> FetchLockAttempt {
        let label = "EVAL acquire-lock-and-read"
        let key = answerKey(customerID, environment)
        let arguments = [
            Array("EVAL".utf8), Self.acquireAndReadScript, Array("5".utf8), lockKey(customerID, environment), key,
            generationKey(customerID, environment), allGenerationKey, groupCountKey, Array(owner.utf8),
            Array(String(Self.milliseconds(timeToLive)).utf8), Self.freshInvalidationCount(),
        ]
        let reply = try await call(arguments, label)
        guard case .array(let parts?) = reply, parts.count == 5, case .integer(let taken) = parts[0],
            taken == 0 || taken == 1, let answer = servedAnswer(parts[1], key: key),
            let customer = Self.count(parts[2]), let all = Self.count(parts[3]), let groups = Self.count(parts[4])
        else { throw unexpected(reply, label) }
        return FetchLockAttempt(
            acquired: taken == 1,
            answer: answer,
            generation: InvalidationGeneration(customer: customer, all: all, groups: groups)
        )
    }

    /// Releases the customer's fetch lock if `owner` still holds it, and keeps the answer only if no
    /// invalidation of the customer, of everyone or of one of its groups came after the write's
    /// generation was read, in one script: the lock is released first, whether the answer is then
    /// kept or refused.
    ///
    /// - Parameters:
    ///   - write: The answer and what decides whether it may be kept.
    ///   - owner: The value the fetch lock was taken with.
    /// - Returns: Whether the answer was kept.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`.
    public func setAnswer(
        _ write: AnswerWrite,
        releasingFetchLock owner: String
    ) async throws(AppStoreGroupsError) -> Bool {
        try await conditionalSet(
            write,
            Self.conditionalSetReleasingScript,
            "EVAL set-answer-release-lock",
            extraKeys: [lockKey(write.customerID, write.environment)],
            extraArguments: [Array(owner.utf8)]
        )
    }
}
