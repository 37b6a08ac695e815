import Foundation
import ServingTestSupport
import Testing

/// The fleet's budget, as the fake App Store counts it, when some decision servers lose Redis.
///
/// Four decision servers share one real redis-server and a budget of 2 requests a second (a burst
/// of 2); one, two or three of them are cut off from it: given a Redis address where nothing
/// listens (refused), or one that accepts and never answers (silent). Each server is driven with
/// customers of its own for 12 seconds. Over any 10 seconds the fake App Store may then see at most
/// the budget plus one burst (22 requests), and none from a cut-off server: it sends nothing beyond
/// what Redis granted it, which is nothing. With `--fallback-share 0.25`, the behaviour before, the
/// cut-off servers added a bucket of their own each: the busiest window held 27, 32 and 39 with
/// one, two and three refused. A server whose Redis answers every call 200 ms late (slow, not cut
/// off) still takes its tokens from Redis.
@Suite(
    "Decision server: fleet budget with servers cut off from Redis",
    .heavy,
    .requires(.pythonCryptography),
    .requires(.redisServer)
)
struct DecisionServerBudgetWindowTests {
    static let rate = 2
    static let window: Int64 = 10_000

    /// How the first servers reach Redis.
    enum Link: String, CustomTestStringConvertible {
        /// Nothing listens at the address they are given.
        case refused
        /// A proxy that accepts and holds every call for an hour.
        case silent
        /// A proxy that forwards every call 200 ms late: not cut off.
        case slow

        var testDescription: String { rawValue }
    }

    @Test(
        "four servers, 1, 2 or 3 cut off: at most the budget plus one burst in any 10 s, none from a cut-off server",
        arguments: [(1, Link.refused), (2, .refused), (3, .refused), (2, .silent), (1, .slow)]
    )
    func budgetHoldsInEveryWindow(cutOff: Int, link: Link) async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let otherPort: Int
        var proxy: RedisDelayProxy?
        let dead = try LoopbackSocket(refusing: ())
        defer { withExtendedLifetime(dead) {} }
        switch link {
        case .refused: otherPort = dead.port
        case .silent, .slow:
            let delay: Duration = link == .slow ? .milliseconds(200) : .seconds(3600)
            let started = try RedisDelayProxy(upstreamPort: redis.port, delay: delay)
            proxy = started
            otherPort = started.port
        }
        defer { proxy?.stop() }
        let store = try await FakeAppStore()
        var servers: [DecisionServerProcess] = []
        for index in 0..<4 {
            let port = index < cutOff ? otherPort : redis.port
            servers.append(
                try await DecisionServerProcess.start(
                    appStore: store,
                    arguments: ["--redis", "127.0.0.1:\(port)", "--requests-per-second", "\(Self.rate)"]
                )
            )
        }
        // Refused for the budget: 503 or 429 with Retry-After.
        try await DecisionServerFleetGuaranteeTests.drive(
            servers,
            prefix: "fleet",
            until: ContinuousClock.now + .seconds(12),
            refusals: [429, 503]
        )
        let requests = try await store.log()
        let busiest = DecisionServerFleetGuaranteeTests.busiest(requests.map(\.timeMs).sorted(), window: Self.window)
        let budget = Self.rate * 10 + Self.rate
        #expect(busiest <= budget, "\(busiest) requests in one 10-second window; the budget is \(budget)")
        #expect(!requests.isEmpty, "the healthy servers sent nothing")
        for index in 0..<cutOff where link != .slow {
            let sent = requests.count { $0.path.contains("/fleet\(index)_") }
            #expect(sent == 0, "cut-off server \(index) sent \(sent) requests")
        }
    }
}
