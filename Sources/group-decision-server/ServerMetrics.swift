import Foundation
import GroupDecisions
import Synchronization

/// The server's counters and its request-latency histogram, written as Prometheus text
/// (`GET /metrics`, text format 0.0.4).
///
/// The observer feeds the service's events (cache hits and misses, upstream calls and 429s,
/// budget refusals, stale answers, invalidations, reloads), the routes the decisions, and the
/// HTTP layer every answered request. What the request path counts is an atomic add or a short
/// lock, never a write.
final class ServerMetrics: Sendable {
    /// The routes requests are counted under; anything else is `other`, a refusal before the head
    /// was read `none`.
    static let routes = [
        "/decision", "/workspace/members", "/invalidate", "/shadow", "/shadow/reset", "/healthz", "/readyz",
        "/metrics", "/openapi.json",
    ]
    /// Upper bounds of the latency buckets, in seconds.
    static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// Called before an exposition is written: the access recorder counts what it holds.
    var beforeScrape: @Sendable () -> Void {
        get { scrapeHook.withLock { $0 } }
        set { scrapeHook.withLock { $0 = newValue } }
    }
    private let scrapeHook = Mutex<@Sendable () -> Void>({})
    let servedLive = Atomic<Int>(0)
    let servedCache = Atomic<Int>(0)
    let servedStale = Atomic<Int>(0)
    let localHits = Atomic<Int>(0)
    let sharedHits = Atomic<Int>(0)
    let misses = Atomic<Int>(0)
    private let labeled = Mutex(Labeled())
    /// Per route (``routes``, then other, then none): each bucket's count, the count and the sum.
    private let latency = Mutex(Latency())

    private struct Labeled {
        /// Decisions by source and outcome (`served`, or the refusal's code).
        var decisions: [Pair: Int] = [:]
        var upstream: [Pair: Int] = [:]
        var rateLimited: [String: Int] = [:]
        var budgetRefusals: [String: Int] = [:]
        var stale: [String: Int] = [:]
        var invalidations: [String: Int] = [:]
        var reloads: [String: Int] = [:]
        var sharedCacheFailures = 0
        var requests: [Pair: Int] = [:]
    }

    struct Pair: Hashable, Comparable {
        var first: String
        var second: String

        static func < (left: Pair, right: Pair) -> Bool {
            (left.first, left.second) < (right.first, right.second)
        }
    }

    private struct Latency {
        var counts = [[Int]](
            repeating: [Int](repeating: 0, count: ServerMetrics.buckets.count),
            count: ServerMetrics.routes.count + 2
        )
        var totals = [Int](repeating: 0, count: ServerMetrics.routes.count + 2)
        var sums = [Double](repeating: 0, count: ServerMetrics.routes.count + 2)
    }

    func served(_ source: ServedDecision.Source) {
        switch source {
        case .cache: servedCache.add(1, ordering: .relaxed)
        case .live: servedLive.add(1, ordering: .relaxed)
        case .stale: servedStale.add(1, ordering: .relaxed)
        default: labeled.withLock { $0.decisions[Pair(first: source.name, second: "served"), default: 0] += 1 }
        }
    }

    func refused(_ code: String) {
        labeled.withLock { $0.decisions[Pair(first: "none", second: code), default: 0] += 1 }
    }

    func upstream(_ endpoint: String, status: String) {
        labeled.withLock { $0.upstream[Pair(first: endpoint, second: status), default: 0] += 1 }
    }

    func rateLimited(_ endpoint: String) {
        labeled.withLock { $0.rateLimited[endpoint, default: 0] += 1 }
    }

    func budgetRefused(_ endpoint: String) {
        labeled.withLock { $0.budgetRefusals[endpoint, default: 0] += 1 }
    }

    func staleServed(_ reason: String) {
        labeled.withLock { $0.stale[reason, default: 0] += 1 }
    }

    func invalidated(_ scope: String) {
        labeled.withLock { $0.invalidations[scope, default: 0] += 1 }
    }

    func reloaded(_ outcome: String) {
        labeled.withLock { $0.reloads[outcome, default: 0] += 1 }
    }

    func sharedCacheFailed() {
        labeled.withLock { $0.sharedCacheFailures += 1 }
    }

    /// One answered request.
    func answered(path: String?, status: Int, duration: Duration) {
        let route = path.map { path in Self.routes.firstIndex(of: path) ?? Self.routes.count } ?? Self.routes.count + 1
        let (seconds, attoseconds) = duration.components
        let elapsed = Double(seconds) + Double(attoseconds) / 1e18
        let bucket = Self.buckets.firstIndex { elapsed <= $0 }
        latency.withLock { latency in
            if let bucket { latency.counts[route][bucket] += 1 }
            latency.totals[route] += 1
            latency.sums[route] += elapsed
        }
        labeled.withLock { $0.requests[Pair(first: Self.routeName(route), second: String(status)), default: 0] += 1 }
    }

    private static func routeName(_ index: Int) -> String {
        index < routes.count ? routes[index] : index == routes.count ? "other" : "none"
    }

    /// The exposition: every family with its `# HELP` and `# TYPE`, then its samples.
    func text(service: GroupDecisionService, requestsInFlight: Int) -> String {
        beforeScrape()
        var labeled = self.labeled.withLock { $0 }
        let counted = [
            ("cache", servedCache.load(ordering: .relaxed)), ("live", servedLive.load(ordering: .relaxed)),
            ("stale", servedStale.load(ordering: .relaxed)),
        ]
        for (source, value) in counted where value > 0 {
            labeled.decisions[Pair(first: source, second: "served"), default: 0] += value
        }
        let latency = self.latency.withLock { $0 }
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func sample(_ name: String, _ labels: [(String, String)], _ value: String) {
            let rendered = labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",")
            out += labels.isEmpty ? "\(name) \(value)\n" : "\(name){\(rendered)} \(value)\n"
        }
        family(
            "group_decision_server_decisions_total",
            "counter",
            "Decisions by where the groups came from and how they ended: served, or the refusal's error code."
        )
        for (pair, count) in labeled.decisions.sorted(by: { $0.key < $1.key }) {
            sample(
                "group_decision_server_decisions_total",
                [("source", pair.first), ("outcome", pair.second)],
                String(count)
            )
        }
        family(
            "group_decision_server_cache_hits_total",
            "counter",
            "Answers found fresh in a cache: this process's (local) or the shared one."
        )
        sample(
            "group_decision_server_cache_hits_total",
            [("cache", "local")],
            String(localHits.load(ordering: .relaxed))
        )
        sample(
            "group_decision_server_cache_hits_total",
            [("cache", "shared")],
            String(sharedHits.load(ordering: .relaxed))
        )
        family(
            "group_decision_server_cache_misses_total",
            "counter",
            "Decisions whose groups were not in this process's cache."
        )
        sample("group_decision_server_cache_misses_total", [], String(misses.load(ordering: .relaxed)))
        family(
            "group_decision_server_upstream_requests_total",
            "counter",
            "Requests sent to the App Store, by endpoint and the HTTP status it answered (error: none)."
        )
        for (pair, count) in labeled.upstream.sorted(by: { $0.key < $1.key }) {
            sample(
                "group_decision_server_upstream_requests_total",
                [("endpoint", pair.first), ("status", pair.second)],
                String(count)
            )
        }
        family(
            "group_decision_server_upstream_rate_limited_total",
            "counter",
            "429 answers from the App Store, by endpoint."
        )
        for (endpoint, count) in labeled.rateLimited.sorted(by: { $0.key < $1.key }) {
            sample("group_decision_server_upstream_rate_limited_total", [("endpoint", endpoint)], String(count))
        }
        family(
            "group_decision_server_budget_refusals_total",
            "counter",
            "Requests refused because the request budget spared no token within the wait allowed, by endpoint."
        )
        for (endpoint, count) in labeled.budgetRefusals.sorted(by: { $0.key < $1.key }) {
            sample("group_decision_server_budget_refusals_total", [("endpoint", endpoint)], String(count))
        }
        family("group_decision_server_stale_served_total", "counter", "Answers served stale, by reason.")
        for (reason, count) in labeled.stale.sorted(by: { $0.key < $1.key }) {
            sample("group_decision_server_stale_served_total", [("reason", reason)], String(count))
        }
        family(
            "group_decision_server_invalidations_total",
            "counter",
            "Invalidations taken, by scope: customer, group or all."
        )
        for (scope, count) in labeled.invalidations.sorted(by: { $0.key < $1.key }) {
            sample("group_decision_server_invalidations_total", [("scope", scope)], String(count))
        }
        family("group_decision_server_policy_reloads_total", "counter", "Policy reloads, by outcome.")
        for (outcome, count) in labeled.reloads.sorted(by: { $0.key < $1.key }) {
            sample("group_decision_server_policy_reloads_total", [("outcome", outcome)], String(count))
        }
        family(
            "group_decision_server_shared_cache_failures_total",
            "counter",
            "Calls to the shared cache that failed or were too slow."
        )
        sample("group_decision_server_shared_cache_failures_total", [], String(labeled.sharedCacheFailures))
        let shadow = service.shadowReport
        family(
            "group_decision_server_shadow_decisions",
            "gauge",
            "Decisions compared with the candidate policy since the shadow report began."
        )
        sample("group_decision_server_shadow_decisions", [], String(shadow.decisions))
        family(
            "group_decision_server_shadow_changed_decisions",
            "gauge",
            "Of those, decisions the candidate policy would change."
        )
        sample("group_decision_server_shadow_changed_decisions", [], String(shadow.changedDecisions))
        family(
            "group_decision_server_cached_bytes",
            "gauge",
            "Bytes this process's cache of answers takes (the library's estimate)."
        )
        sample("group_decision_server_cached_bytes", [], String(service.cachedBytes))
        family("group_decision_server_requests_in_flight", "gauge", "Requests being answered now.")
        sample("group_decision_server_requests_in_flight", [], String(requestsInFlight))
        family("group_decision_server_requests_total", "counter", "Answered HTTP requests, by route and status.")
        for (pair, count) in labeled.requests.sorted(by: { $0.key < $1.key }) {
            sample(
                "group_decision_server_requests_total",
                [("route", pair.first), ("code", pair.second)],
                String(count)
            )
        }
        family(
            "group_decision_server_request_duration_seconds",
            "histogram",
            "From a request's head to its answer written, by route."
        )
        for route in 0..<(Self.routes.count + 2) where latency.totals[route] > 0 {
            let name = Self.routeName(route)
            var cumulative = 0
            for (index, bound) in Self.buckets.enumerated() {
                cumulative += latency.counts[route][index]
                sample(
                    "group_decision_server_request_duration_seconds_bucket",
                    [("route", name), ("le", String(bound))],
                    String(cumulative)
                )
            }
            sample(
                "group_decision_server_request_duration_seconds_bucket",
                [("route", name), ("le", "+Inf")],
                String(latency.totals[route])
            )
            sample("group_decision_server_request_duration_seconds_sum", [("route", name)], String(latency.sums[route]))
            sample(
                "group_decision_server_request_duration_seconds_count",
                [("route", name)],
                String(latency.totals[route])
            )
        }
        return out
    }

    /// A label value as the text format escapes it: backslash, double quote and newline.
    private static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
