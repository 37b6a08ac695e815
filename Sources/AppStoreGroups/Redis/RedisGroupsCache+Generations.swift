public import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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

    /// Deletes the answer keys (the first half of `KEYS`) and counts an invalidation under each
    /// generation key (the second half).
    ///
    /// Each count is kept for `ARGV[1]` milliseconds. Sent twice, it counts twice: a count that
    /// moved further refuses the same writes.
    static let invalidateScript = Array(
        """
        local half = #KEYS / 2
        for i = 1, half do
          redis.call('DEL', KEYS[i])
          redis.call('INCR', KEYS[half + i])
          redis.call('PEXPIRE', KEYS[half + i], ARGV[1])
        end
        return half
        """.utf8
    )

    /// Sets the answer (`KEYS[1]`, value `ARGV[1]`, `ARGV[2]` milliseconds) only when the
    /// customer's count (`KEYS[2]`) and everyone's (`KEYS[3]`) are still `ARGV[3]` and `ARGV[4]`.
    static let conditionalSetScript = Array(
        """
        if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[3] then return 0 end
        if (redis.call('GET', KEYS[3]) or '0') ~= ARGV[4] then return 0 end
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        return 1
        """.utf8
    )

    /// How many invalidations the customer (in the environment) and every customer have seen
    /// (`MGET` of the two counts; a missing count is zero).
    ///
    /// - Parameters:
    ///   - customerID: The customer about to be fetched.
    ///   - environment: The environment of the fetch.
    /// - Returns: The generation now.
    /// - Throws: ``AppStoreGroupsError/Code/storeFailure``, also for a count that is not a number.
    public func invalidationGeneration(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> InvalidationGeneration {
        let label = "MGET generation"
        let reply = try await call(
            [Array("MGET".utf8), generationKey(customerID, environment), allGenerationKey],
            label
        )
        guard case .array(let parts?) = reply, parts.count == 2,
            let customer = Self.count(parts[0]), let all = Self.count(parts[1])
        else { throw unexpected(reply, label) }
        return InvalidationGeneration(customer: customer, all: all)
    }

    /// A count as `MGET` answers it: a number, or null for zero.
    private static func count(_ reply: RESPReply) -> UInt64? {
        switch reply {
        case .bulk(nil): 0
        case .bulk(let value?): UInt64(String(decoding: value, as: UTF8.self))
        default: nil
        }
    }

    /// Keeps an answer for `timeToLive`, written with its key, only if neither count moved since
    /// `generation` was read (compare and set, in one script).
    ///
    /// - Parameters:
    ///   - answer: Apple's answer and when it was fetched.
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    ///   - timeToLive: How long Redis keeps it.
    ///   - generation: The generation read before the fetch began.
    /// - Returns: Whether the answer was kept.
    /// - Throws: ``AppStoreGroupsError/Code/storeFailure``.
    public func setAnswer(
        _ answer: CachedGroupsAnswer,
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration,
        ifGeneration generation: InvalidationGeneration
    ) async throws(AppStoreGroupsError) -> Bool {
        let key = answerKey(customerID, environment)
        let arguments = [
            Array("EVAL".utf8), Self.conditionalSetScript, Array("3".utf8), key,
            generationKey(customerID, environment), allGenerationKey, answer.encoded(boundTo: key),
            Array(String(Self.milliseconds(timeToLive)).utf8), Array(String(generation.customer).utf8),
            Array(String(generation.all).utf8),
        ]
        switch try await call(arguments, "EVAL set-answer") {
        case .integer(1): return true
        case .integer(0): return false
        case let other: throw unexpected(other, "EVAL set-answer")
        }
    }
}
