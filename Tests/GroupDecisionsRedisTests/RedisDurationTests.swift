import Testing

@testable import GroupDecisionsRedis

/// Durations a caller gives the Redis cache become milliseconds without trapping, whatever their
/// size.
@Suite("Redis cache: durations in milliseconds")
struct RedisDurationTests {
    static let cases: [(Duration, Int64)] = [
        (.seconds(Int64.max), Int64.max),
        (.seconds(9_223_372_036_854_776), Int64.max),
        (.seconds(9_223_372_036_854_774), 9_223_372_036_854_774_000),
        (.milliseconds(1500), 1500),
        (.zero, 1),
    ]

    @Test("milliseconds saturate instead of overflowing", arguments: 0..<5)
    func saturates(index: Int) {
        let (duration, milliseconds) = Self.cases[index]
        #expect(RedisGroupsCache.milliseconds(duration) == milliseconds)
    }
}
