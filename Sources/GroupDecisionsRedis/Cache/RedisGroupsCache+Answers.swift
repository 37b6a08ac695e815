public import AppStoreGroups
import Foundation
public import GroupDecisions
public import GroupPolicy

/// The customers' answers: read back only under the key they were written with, and not served
/// when fetched further in the future than the tolerated clock skew.
extension RedisGroupsCache {
    /// The answer kept for a customer, or `nil` when there is none, it has expired, or the value
    /// under its key is not one this store wrote for that key (written for another customer or
    /// environment, in an earlier layout, or fetched further in the future than
    /// ``maximumClockSkew``).
    ///
    /// - Parameters:
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    /// - Returns: The answer, or `nil`.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`.
    public func answer(
        anyTransactionID customerID: String,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> CachedGroupsAnswer? {
        let key = answerKey(customerID, environment)
        let reply = try await call([Array("GET".utf8), key], "GET answer")
        guard let answer = servedAnswer(reply, key: key) else { throw unexpected(reply, "GET answer") }
        return answer
    }

    /// The answer a reply holds for `key`: `.some(nil)` for none, or for a value this store did not
    /// write for that key or fetched further in the future than ``maximumClockSkew``; `nil` for a
    /// reply that is not a value at all.
    func servedAnswer(_ reply: RESPReply, key: [UInt8]) -> CachedGroupsAnswer?? {
        switch reply {
        case .bulk(let value?):
            guard let answer = CachedGroupsAnswer(encoded: value, boundTo: key),
                answer.fetchedAt.timeIntervalSince(now()) <= maximumClockSkewSeconds
            else { return .some(nil) }
            return answer
        case .bulk(nil): return .some(nil)
        default: return nil
        }
    }

    /// Keeps an answer for a customer for `timeToLive` (`SET key value PX ms`), written with its
    /// key.
    ///
    /// - Parameters:
    ///   - answer: Apple's answer and when it was fetched.
    ///   - customerID: The id the customer's decisions are asked with.
    ///   - environment: The environment the answer stands for.
    ///   - timeToLive: How long Redis keeps it.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`.
    public func setAnswer(
        _ answer: CachedGroupsAnswer,
        anyTransactionID customerID: String,
        in environment: StoreEnvironment,
        timeToLive: Duration
    ) async throws(AppStoreGroupsError) {
        let key = answerKey(customerID, environment)
        let arguments = [
            Array("SET".utf8), key, answer.encoded(boundTo: key),
            Array("PX".utf8), Array(String(Self.milliseconds(timeToLive)).utf8),
        ]
        switch try await call(arguments, "SET answer") {
        case .simple("OK"): return
        case let other: throw unexpected(other, "SET answer")
        }
    }
}
