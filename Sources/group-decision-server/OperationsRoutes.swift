import AppStoreGroups
import GroupDecisions
import GroupDecisionsRedis
import HTTPServing

/// What an orchestrator and a monitor ask: `GET /healthz` (alive), `GET /readyz` (policies loaded
/// and, with `--redis`, the shared cache answering), `GET /metrics` (Prometheus text) and
/// `GET /openapi.json` (the contract).
struct OperationsRoutes: Sendable {
    let service: GroupDecisionService
    let metrics: ServerMetrics
    /// The shared cache readiness probes, and where it is (for the reason of a 503).
    let sharedCache: (cache: RedisGroupsCache, address: String)?
    /// Requests being answered now, from the HTTP layer.
    let requestsInFlight: @Sendable () -> Int

    /// The routes that need no waiting; `nil` for any other request.
    func respondAtOnce(
        to request: HTTPServing.HTTPRequest,
        _ query: [(name: String, value: String)]
    ) throws(ServerResponse) -> ServerResponse? {
        guard request.method == "GET" else { return nil }
        switch request.path {
        case "/healthz":
            _ = try Parameters(query, allowed: [])
            return .json(200, JSON.object([("status", .string("alive"))]).bytes)
        case "/metrics":
            _ = try Parameters(query, allowed: [])
            var response = ServerResponse.json(
                200,
                Array(metrics.text(service: service, requestsInFlight: requestsInFlight()).utf8)
            )
            response.contentType = "text/plain; version=0.0.4; charset=utf-8"
            return response
        case "/openapi.json":
            _ = try Parameters(query, allowed: [])
            return .json(200, OpenAPIDocument.bytes)
        default:
            return nil
        }
    }

    /// `GET /readyz`: 200 once the policies are loaded and the shared cache (with `--redis`)
    /// answers within two seconds; 503 with the reason otherwise.
    func readiness(_ query: [(name: String, value: String)]) async throws(ServerResponse) -> ServerResponse {
        _ = try Parameters(query, allowed: [])
        let revision = service.policies.revision
        if let sharedCache {
            let cache = sharedCache.cache
            let answered = await withTaskGroup(of: Bool?.self) { group in
                group.addTask {
                    do {
                        _ = try await cache.invalidationCount()
                        return true
                    } catch {
                        return false
                    }
                }
                group.addTask {
                    try? await Task.sleep(for: .seconds(2))
                    return nil
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            guard answered == true else {
                throw .error(
                    503,
                    "not-ready",
                    "the shared cache at \(sharedCache.address) "
                        + (answered == nil ? "did not answer within 2 seconds" : "answered with an error"),
                    headerFields: [("Retry-After", "1")]
                )
            }
        }
        return .json(
            200,
            JSON.object([("status", .string("ready")), ("policyRevision", .string(revision))]).bytes
        )
    }
}
