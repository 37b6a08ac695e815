import Foundation
import ServingTestSupport
import Testing

/// The fleet's budget, as the fake App Store counts it, when some example servers lose Redis.
///
/// Four example servers share one real redis-server and a budget of 2 requests a second (a burst
/// of 2); one, two or three of them are given a Redis address where nothing listens. Each server is
/// driven with customers of its own for 12 seconds. Over any 10 seconds the fake App Store may
/// then see at most the budget plus one burst (22 requests), and none from a cut-off server: it
/// sends nothing beyond what Redis granted it, which is nothing. With `--fallback-share 0.25`,
/// the behaviour before, the cut-off servers add a bucket of their own each and the window holds
/// more.
@Suite("Example: DecisionServer's fleet budget with servers cut off from Redis")
struct DecisionServerBudgetWindowTests {
    static let rate = 2
    static let window: Int64 = 10_000

    @Test(
        "four servers, 1, 2 or 3 cut off: at most the budget plus one burst in any 10 s, none from a cut-off server",
        .requires(.pythonCryptography),
        .requires(.redisServer),
        arguments: [1, 2, 3]
    )
    func budgetHoldsInEveryWindow(cutOff: Int) async throws {
        let redis = try await RedisServer.start()
        defer { redis.stop() }
        let deadPort = try LoopbackSocket.freePort()
        let store = try await FakeAppStore()
        var servers: [DecisionServerProcess] = []
        for index in 0..<4 {
            let port = index < cutOff ? deadPort : redis.port
            servers.append(
                try await DecisionServerProcess.start(
                    appStore: store,
                    arguments: ["--redis", "127.0.0.1:\(port)", "--requests-per-second", "\(Self.rate)"]
                )
            )
        }
        let end = ContinuousClock.now + .seconds(12)
        // Two clients a server, each asking for customers nobody asked for before: every decision
        // needs Apple, so each server spends all the budget it is given.
        try await withThrowingTaskGroup { group in
            for (index, server) in servers.enumerated() {
                for client in 0..<2 {
                    group.addTask {
                        var sequence = 0
                        while ContinuousClock.now < end {
                            sequence += 1
                            let answer = try await server.get(
                                "/decision?transactionId=fleet\(index)_\(client)_\(sequence)"
                            )
                            // Refused for the budget: 503 or 429 with Retry-After; served: 200.
                            #expect([200, 429, 503].contains(answer.status))
                            if answer.status != 200 { try await Task.sleep(for: .milliseconds(50)) }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let requests = try await store.log()
        let times = requests.map(\.timeMs).sorted()
        var busiest = 0
        var first = 0
        for last in times.indices {
            while times[last] - times[first] >= Self.window { first += 1 }
            busiest = max(busiest, last - first + 1)
        }
        let budget = Self.rate * 10 + Self.rate
        #expect(busiest <= budget, "\(busiest) requests in one 10-second window; the budget is \(budget)")
        #expect(!times.isEmpty, "the healthy servers sent nothing")
        for index in 0..<cutOff {
            let sent = requests.count { $0.path.contains("/fleet\(index)_") }
            #expect(sent == 0, "cut-off server \(index) sent \(sent) requests")
        }
    }
}
