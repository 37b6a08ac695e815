public import AppStoreGroups
import Foundation
public import GroupDecisions
public import GroupPolicy

/// Invalidation generations: a count per customer and environment, and one for every customer, that
/// a writer must match for its answer to be kept.
extension RedisGroupsCache {
    /// How long a customer's invalidation count outlives its last invalidation: one day.
    ///
    /// A count that expires reads as zero again, which only a fetch that began before the
    /// invalidation and read zero could match: a fetch lasting a day. A fetch that read a count
    /// and finds it expired is refused (it no longer matches). So one small key per customer
    /// invalidated in the last day, and no fetch can outlast it.
    public static let invalidationGenerationLifetime = Duration.seconds(86_400)

    /// The values the store-wide invalidation count takes: every invalidation sets it to a fresh
    /// random value in this range, drawn in Swift (Redis seeds Lua's `math.random` the same way in
    /// every script), and so does a read that finds it missing.
    ///
    /// The count is only compared for equality, so it must never come back to a value a process
    /// remembers: not after a restart without persistence, a flush or an eviction (a missing count
    /// is created at a fresh value by the read that finds it, never read as 0), and not after a
    /// failover to a replica that lagged behind (the next invalidation draws a fresh value rather
    /// than counting up from the replica's). Two draws are equal with a chance of 1 in about
    /// 9.2 × 10^18. The range stops below 2^63 − 2^32 so that a process of an earlier version, which
    /// adds one with `INCR`, still counts during a rolling upgrade.
    static let invalidationCounts: ClosedRange<UInt64> = 1...((1 << 63) - (1 << 32))

    /// A fresh random value for the store-wide invalidation count, as a script argument.
    static func freshInvalidationCount() -> [UInt8] {
        Array(String(UInt64.random(in: invalidationCounts)).utf8)
    }

    /// Reads the store-wide invalidation count `KEYS[1]`, creating it at the fresh value `ARGV[1]`
    /// when it is missing, in one atomic step.
    ///
    /// A store that lost its keys never reads as a count a process remembers. Sent twice, it
    /// answers the same.
    static let readCountScript = Array(
        """
        local count = redis.call('GET', KEYS[1])
        if not count then
          redis.call('SET', KEYS[1], ARGV[1])
          count = ARGV[1]
        end
        return count
        """.utf8
    )

    /// Reads the answer `KEYS[1]` and the store-wide invalidation count `KEYS[2]` in one atomic
    /// step, creating the count at the fresh value `ARGV[1]` when it is missing (see
    /// ``readCountScript``).
    static let readAnswerAndCountScript = Array(
        """
        local count = redis.call('GET', KEYS[2])
        if not count then
          redis.call('SET', KEYS[2], ARGV[1])
          count = ARGV[1]
        end
        return {redis.call('GET', KEYS[1]), count}
        """.utf8
    )

    /// Reads the customer's invalidation count `KEYS[1]`, everyone's `KEYS[2]` and the groups'
    /// `KEYS[3]`, creating everyone's at the fresh value `ARGV[1]` when it is missing, in one atomic
    /// step: answers `{customer, all, groups}`, a missing customer or group count as null (zero).
    ///
    /// Everyone's count is never missing when a write compares it, so a write read before the store
    /// lost its keys is refused (see ``conditionalSetScript``). Sent twice, it answers the same.
    static let readGenerationScript = Array(
        """
        if not redis.call('GET', KEYS[2]) then redis.call('SET', KEYS[2], ARGV[1]) end
        return redis.call('MGET', KEYS[1], KEYS[2], KEYS[3])
        """.utf8
    )

    /// Sets the store-wide invalidation count `KEYS[1]` to the fresh value `ARGV[1]`.
    ///
    /// What ``invalidateAll()`` does once every answer has gone. Sent twice, it sets the same value.
    static let countInvalidationScript = Array(
        """
        redis.call('SET', KEYS[1], ARGV[1])
        return 1
        """.utf8
    )

    /// Sets the store-wide invalidation count (the last of `KEYS`) to the fresh value `ARGV[2]`,
    /// deletes the answer keys (the first half of the others) and counts an invalidation under each
    /// generation key (the second half).
    ///
    /// Each customer count is kept for `ARGV[1]` milliseconds. Sent twice, it counts the customers
    /// twice and sets the same store-wide value: a count that moved further refuses the same
    /// writes, and one more invalidation counted costs the processes one more read of the shared
    /// cache.
    static let invalidateScript = Array(
        """
        redis.call('SET', KEYS[#KEYS], ARGV[2])
        local half = (#KEYS - 1) / 2
        for i = 1, half do
          redis.call('DEL', KEYS[i])
          redis.call('INCR', KEYS[half + i])
          redis.call('PEXPIRE', KEYS[half + i], ARGV[1])
        end
        return half
        """.utf8
    )

    /// The most customers listed under one group and environment: see ``invalidate(groupID:)``.
    public static let maximumMembersPerGroup = 10_000

    /// Sets an answer unless an invalidation came since its generation, and lists it under its groups.
    ///
    /// The answer is `KEYS[1]`, value `ARGV[1]`, for `ARGV[2]` milliseconds, set only when the
    /// customer's count (`KEYS[2]`) and everyone's (`KEYS[3]`, which must exist: a store that lost it
    /// lost the invalidations it counted) are still `ARGV[3]` and `ARGV[4]`,
    /// and no group of the answer (`ARGV[9]` on) was invalidated after the group count `ARGV[5]`;
    /// then lists the customer (`ARGV[8]`) under each group until the answer expires, at most
    /// `ARGV[6]` customers a group, beyond which the group is marked as overflowing for at least as
    /// long as the answer lives (a shorter write never shortens the mark). `ARGV[7]` is
    /// the key prefix and environment (`<prefix>:<environment>`).
    ///
    /// The index is scored and trimmed on Redis's own clock (`TIME`), the clock the answers expire
    /// on: a writer whose clock runs ahead would otherwise trim, on its clock, entries whose answers
    /// Redis still holds, and a group's invalidation would miss them.
    static let conditionalSetScript = conditionalSetSource(releasingLock: false)

    /// ``conditionalSetScript`` that first releases the fetch lock `KEYS[4]` if its owner is still
    /// `ARGV[9]` (the groups then start at `ARGV[10]`): released whether the answer is then kept
    /// or refused, and before any step that could fail.
    static let conditionalSetReleasingScript = conditionalSetSource(releasingLock: true)

    private static func conditionalSetSource(releasingLock: Bool) -> [UInt8] {
        let release =
            releasingLock ? "if redis.call('GET', KEYS[4]) == ARGV[9] then redis.call('DEL', KEYS[4]) end\n" : ""
        let firstGroup = releasingLock ? 10 : 9
        return Array(
            (release
                + """
                if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[3] then return 0 end
                if redis.call('GET', KEYS[3]) ~= ARGV[4] then return 0 end
                local prefix = string.match(ARGV[7], '^(.*):[^:]*$')
                for i = \(firstGroup), #ARGV do
                  local invalidated = tonumber(redis.call('GET', prefix .. ':group-generation:' .. ARGV[i]) or '0')
                  if invalidated > tonumber(ARGV[5]) then return 0 end
                end
                redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
                local time = redis.call('TIME')
                local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
                local life = tonumber(ARGV[2])
                for i = \(firstGroup), #ARGV do
                  local members = ARGV[7] .. ':members:' .. ARGV[i]
                  redis.call('ZREMRANGEBYSCORE', members, '-inf', now)
                  if redis.call('ZSCORE', members, ARGV[8]) or redis.call('ZCARD', members) < tonumber(ARGV[6]) then
                    redis.call('ZADD', members, now + life, ARGV[8])
                  else
                    local overflow = ARGV[7] .. ':members-overflow:' .. ARGV[i]
                    if redis.call('PTTL', overflow) < life then redis.call('SET', overflow, '1', 'PX', life) end
                  end
                  if redis.call('PTTL', members) < life then redis.call('PEXPIRE', members, life) end
                end
                return 1
                """).utf8
        )
    }

    /// Counts an invalidation of a group and forgets the answers listed under it.
    ///
    /// The group is `ARGV[3]` (the store's group count `KEYS[1]`, the group's
    /// `KEYS[2]`, kept `ARGV[1]` milliseconds), then deletes the answers of the customers listed
    /// under it in each environment `ARGV[5]…` under prefix `ARGV[2]`, and the lists; first of all
    /// it sets the store's invalidation count `KEYS[3]` to the fresh value `ARGV[4]`. Answers
    /// whether a list had overflowed, and how many answers went.
    static let invalidateGroupScript = Array(
        """
        redis.call('SET', KEYS[3], ARGV[4])
        local count = redis.call('INCR', KEYS[1])
        redis.call('SET', KEYS[2], count, 'PX', ARGV[1])
        local overflow = 0
        local removed = 0
        for i = 5, #ARGV do
          local scope = ARGV[2] .. ':' .. ARGV[i]
          local members = scope .. ':members:' .. ARGV[3]
          local flag = scope .. ':members-overflow:' .. ARGV[3]
          if redis.call('EXISTS', flag) == 1 then overflow = 1 end
          for _, customer in ipairs(redis.call('ZRANGE', members, 0, -1)) do
            removed = removed + redis.call('DEL', scope .. ':groups:' .. customer)
          end
          redis.call('DEL', members, flag)
        end
        return {overflow, removed}
        """.utf8
    )

    /// How many invalidations the customer (in the environment), every customer and the groups have
    /// seen, in one script.
    ///
    /// A missing customer or group count is zero. Everyone's count (`<prefix>:generation-all`)
    /// never reads as a value the store did not hold: a read that finds it missing (a flushed,
    /// restarted or evicting store) creates it at a fresh random value in the same step, so a write
    /// whose generation was read before the loss no longer matches and is refused.
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    /// - Returns: The generation now.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`, also for a count that is not a number.
    public func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration {
        let label = "EVAL read-generation"
        let reply = try await call(
            [
                Array("EVAL".utf8), Self.readGenerationScript, Array("3".utf8), generationKey(customerID, environment),
                allGenerationKey, groupCountKey, Self.freshInvalidationCount(),
            ],
            label
        )
        guard case .array(let parts?) = reply, parts.count == 3,
            let customer = Self.count(parts[0]), let all = Self.count(parts[1]), let groups = Self.count(parts[2])
        else { throw unexpected(reply, label) }
        return InvalidationGeneration(customer: customer, all: all, groups: groups)
    }

    /// The store's invalidation count (`<prefix>:invalidations`), created at a fresh random value
    /// when missing, in one script.
    ///
    /// A count is only ever compared for equality: every invalidation sets it to a fresh random
    /// value (a random non-zero value below 2^63 − 2^32), and a read that finds it missing (a store
    /// that lost its keys) creates it at one in the same step, so no read gives a value a process
    /// remembers unless no invalidation came since.
    ///
    /// - Returns: The count.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`, also for a count that is not a number.
    public func invalidationCount() async throws(AppStoreGroupsError) -> UInt64? {
        let label = "EVAL read-invalidations"
        let reply = try await call(
            [
                Array("EVAL".utf8), Self.readCountScript, Array("1".utf8), invalidationCountKey,
                Self.freshInvalidationCount(),
            ],
            label
        )
        guard let count = Self.invalidations(reply) else { throw unexpected(reply, label) }
        return count
    }

    /// The answer kept for a customer and the store's invalidation count, in one script (one atomic
    /// step: an invalidation's script runs wholly before or after it); a missing count is created
    /// as ``invalidationCount()`` creates it.
    ///
    /// - Parameters:
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    /// - Returns: The answer as ``answer(anyTransactionID:in:)`` gives it, and the count.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`, also for a count that is not a number.
    public func answerAndInvalidationCount(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> (answer: CachedGroupsAnswer?, invalidationCount: UInt64?) {
        let label = "EVAL read-answer-invalidations"
        let key = answerKey(customerID, environment)
        let reply = try await call(
            [
                Array("EVAL".utf8), Self.readAnswerAndCountScript, Array("2".utf8), key, invalidationCountKey,
                Self.freshInvalidationCount(),
            ],
            label
        )
        guard case .array(let parts?) = reply, parts.count == 2, let answer = servedAnswer(parts[0], key: key),
            let count = Self.invalidations(parts[1])
        else { throw unexpected(reply, label) }
        return (answer, count)
    }

    /// The store's invalidation count as a reply gives it: a number, or a negative one (a count
    /// an earlier version counted up with `INCR`, which takes one) as its bit pattern; `nil` for a
    /// missing count (the read scripts never answer one) or a value that is not a number.
    ///
    /// The processes only compare it for equality, so every value must read as a distinct count.
    static func invalidations(_ reply: RESPReply) -> UInt64? {
        guard case .bulk(let value?) = reply else { return nil }
        let text = String(decoding: value, as: UTF8.self)
        if let count = UInt64(text) { return count }
        return Int64(text).map { UInt64(bitPattern: $0) }
    }

    /// A count as `MGET` answers it: a number, or null for zero.
    static func count(_ reply: RESPReply) -> UInt64? {
        switch reply {
        case .bulk(nil): 0
        case .bulk(let value?): UInt64(String(decoding: value, as: UTF8.self))
        default: nil
        }
    }

    /// Keeps the write's answer for its time to live, written with its key, only if no invalidation
    /// of the customer, of everyone or of one of its groups came after its generation was read
    /// (compare and set, in one script), and lists the customer under each of its groups for as
    /// long.
    ///
    /// - Parameter write: The answer and what decides whether it may be kept.
    /// - Returns: Whether the answer was kept.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`.
    public func setAnswer(_ write: AnswerWrite) async throws(AppStoreGroupsError) -> Bool {
        try await conditionalSet(write, Self.conditionalSetScript, "EVAL set-answer")
    }

    /// Runs a conditional-set script for `write` and reads its yes or no.
    ///
    /// The arguments are the answer, the customer's and everyone's counts, the keys after them in
    /// `extraKeys`, the fixed `ARGV`s, then `extraArguments`, then the groups (each once, sorted).
    func conditionalSet(
        _ write: AnswerWrite,
        _ script: [UInt8],
        _ label: String,
        extraKeys: [[UInt8]] = [],
        extraArguments: [[UInt8]] = []
    ) async throws(AppStoreGroupsError) -> Bool {
        let key = answerKey(write.customerID, write.environment)
        let keys = [key, generationKey(write.customerID, write.environment), allGenerationKey] + extraKeys
        let fixed = [
            write.answer.encoded(boundTo: key), Array(String(Self.milliseconds(write.timeToLive)).utf8),
            Array(String(write.generation.customer).utf8), Array(String(write.generation.all).utf8),
            Array(String(write.generation.groups).utf8), Array(String(Self.maximumMembersPerGroup).utf8),
            Array("\(keyPrefix):\(write.environment.rawValue)".utf8), Array(write.customerID.utf8),
        ]
        let arguments =
            [Array("EVAL".utf8), script, Array(String(keys.count).utf8)] + keys + fixed + extraArguments
            // Byte for byte: a set of strings merges ids that differ only in Unicode normalisation.
            + Set(write.groupIDs.map { Array(Self.groupKeyPart($0).utf8) }).sorted { $0.lexicographicallyPrecedes($1) }
        switch try await call(arguments, label) {
        case .integer(1): return true
        case .integer(0): return false
        case let other: throw unexpected(other, label)
        }
    }
}

/// Invalidation by group: the customers listed under a group, found and forgotten in one script.
extension RedisGroupsCache {
    /// A group id as the keys name it: itself when it holds only `A-Z a-z 0-9 _ -` (as every id an
    /// earlier version could invalidate), otherwise `~` and the hexadecimal of its UTF-8 bytes.
    ///
    /// Any string may be a group id in Apple's answers, and an app invalidates by any of them: in a
    /// key as it is, one holding `:` could name another prefix's key (`app` and group
    /// `x:Sandbox:groups:c` against prefix `app:Sandbox:members:x`). Encoded, no two ids share a key
    /// and none reaches outside its group's.
    static func groupKeyPart(_ groupID: String) -> String {
        let bytes = Array(groupID.utf8)
        let isPlain = { (byte: UInt8) -> Bool in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default: false
            }
        }
        let plain = !bytes.isEmpty && bytes.allSatisfy(isPlain)
        guard !plain else { return groupID }
        let digits = Array("0123456789abcdef".utf8)
        return "~" + String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] }, as: UTF8.self)
    }

    /// Forgets the answers of every customer listed under the group, in every environment, after
    /// counting an invalidation of the group, in one script; when a list had overflowed
    /// (more than ``maximumMembersPerGroup`` customers kept with the group at once), forgets every
    /// answer instead (``invalidateAll()``).
    ///
    /// A customer is listed under each group of their answer when the answer is written, until it
    /// expires. The lists are sorted sets scored by expiry, trimmed on every write and dropped by
    /// Redis when no answer holding the group is left, so they hold only customers with a live
    /// answer, at most ``maximumMembersPerGroup`` a group and environment. A group with more
    /// members kept at once turns the invalidation into one of everyone: correct (every answer
    /// holding it goes), at the cost of fetching everyone again.
    ///
    /// - Parameter groupID: The group's id.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`.
    public func invalidate(groupID: String) async throws(AppStoreGroupsError) {
        let label = "EVAL invalidate-group"
        let group = Self.groupKeyPart(groupID)
        let arguments =
            [
                Array("EVAL".utf8), Self.invalidateGroupScript, Array("3".utf8), groupCountKey,
                Array("\(keyPrefix):group-generation:\(group)".utf8), invalidationCountKey,
                Array(String(Self.milliseconds(Self.invalidationGenerationLifetime)).utf8), Array(keyPrefix.utf8),
                Array(group.utf8), Self.freshInvalidationCount(),
            ] + StoreEnvironment.allCases.map { Array($0.rawValue.utf8) }
        let reply = try await call(arguments, label)
        guard case .array(let parts?) = reply, parts.count == 2, case .integer(let overflow) = parts[0],
            case .integer = parts[1]
        else { throw unexpected(reply, label) }
        if overflow == 1 { try await invalidateAll() }
    }
}
