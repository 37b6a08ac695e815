public import AppStoreGroups
public import Foundation
import GroupDecisions
public import GroupPolicy

/// The 429 gate: the instant before which no request may go to an endpoint, raised only, and
/// dropped by Redis at that instant.
extension RedisGroupsCache {
    /// The instant before which no request may go to the endpoint, or `nil`.
    ///
    /// - Parameters:
    ///   - endpoint: The endpoint.
    ///   - environment: The environment.
    /// - Returns: The instant, or `nil` when none is set or it has passed.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`.
    public func rateLimitedUntil(
        _ endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> Date? {
        switch try await call([Array("GET".utf8), rateKey(endpoint, environment)], "GET rate-limit") {
        case .bulk(nil):
            return nil
        case .bulk(let value?):
            // Only what `setRateLimitedUntil` writes: whole milliseconds of a `Retry-After` the
            // client accepts (at most 15 digits), so the instant converts back without overflow.
            guard let milliseconds = Int64(String(decoding: value, as: UTF8.self)),
                (0...999_999_999_999_999).contains(milliseconds)
            else {
                throw AppStoreGroupsError(
                    code: .sharedCacheFailure,
                    message: "\(server): GET rate-limit: the instant is not a number of milliseconds"
                )
            }
            let instant = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
            return instant > now() ? instant : nil
        case let other:
            throw unexpected(other, "GET rate-limit")
        }
    }

    private static let raiseScript = Array(
        """
        local known = tonumber(redis.call('GET', KEYS[1]))
        if known and known >= tonumber(ARGV[1]) then return 0 end
        redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
        return 1
        """.utf8
    )

    /// Records that no request may go to the endpoint before `instant`, unless a later instant is
    /// already recorded (compare and set, in one script); Redis drops the key at the instant.
    ///
    /// - Parameters:
    ///   - instant: The `Retry-After` instant.
    ///   - endpoint: The endpoint that answered 429.
    ///   - environment: The environment it answered for.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure`.
    public func setRateLimitedUntil(
        _ instant: Date,
        for endpoint: GroupsEndpoint,
        in environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) {
        let instantMilliseconds = Int64((instant.timeIntervalSince1970 * 1000).rounded(.up))
        let left = instantMilliseconds - Int64((now().timeIntervalSince1970 * 1000).rounded(.down))
        guard left > 0 else { return }
        let arguments = [
            Array("EVAL".utf8), Self.raiseScript, Array("1".utf8), rateKey(endpoint, environment),
            Array(String(instantMilliseconds).utf8), Array(String(left).utf8),
        ]
        switch try await call(arguments, "EVAL raise-rate-limit") {
        case .integer: return
        case let other: throw unexpected(other, "EVAL raise-rate-limit")
        }
    }
}
