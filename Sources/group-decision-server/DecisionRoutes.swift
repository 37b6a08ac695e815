import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy
import HTTPServing

/// The server's endpoints: a customer's Decision, the members of a shared workspace,
/// invalidation for an App Store Server Notifications handler, and the shadow report of a candidate
/// policy.
///
/// Decisions come from the library's `GroupDecisionService`: its caches (in this process, and in
/// Redis with `--redis`), single flight, rate budget and 429 gate; member listings go through the
/// same gate with a budget of their own. Malformed requests are refused before anything spends the
/// budget. It trusts its caller:
/// `entitlement` parameters must come from transactions your backend has verified, so run it on
/// loopback (or a private network) next to that backend, never open to apps. Every failure grants
/// nothing: the answer is an error, never a partial Decision.
struct DecisionRoutes: Sendable {
    /// The most members listed for one group (Apple sends 100 a page).
    static let maximumMembers = 10_000

    let service: GroupDecisionService
    /// For member listings, which are not cached (a workspace admin asks for them rarely); their
    /// requests go through the service's rate-limit gate.
    let clients: [StoreEnvironment: AppStoreGroupsClient]
    /// What the operations routes answer: health, readiness, metrics, the contract.
    let operations: OperationsRoutes
    /// The token `POST /invalidate` and `POST /shadow/reset` must present, when one is set.
    let adminToken: AdminToken?

    /// The answer when it needs no waiting, on the connection's event loop: a decision this
    /// process holds, a refusal, the operations routes; `nil` for a request that must wait (a
    /// fetch, an invalidation, the shadow comparisons, the shared cache's readiness).
    func respondAtOnce(to request: HTTPServing.HTTPRequest) -> ServerResponse? {
        do {
            let query = try Self.query(request)
            switch (request.method, request.path) {
            case ("GET", "/decision"): return try decisionAtOnce(query)
            case ("GET", "/workspace/members"), ("GET", "/shadow"), ("GET", "/readyz"): return nil
            case ("POST", "/invalidate"):
                try checkAdmin(request)
                return nil
            case ("POST", "/shadow/reset"): return try resetShadow(request, query)
            default: return try operations.respondAtOnce(to: request, query) ?? Self.unrouted(request)
            }
        } catch {
            return error
        }
    }

    func respond(to request: HTTPServing.HTTPRequest) async -> ServerResponse {
        do {
            let query = try Self.query(request)
            switch (request.method, request.path) {
            case ("GET", "/decision"): return try await decision(query)
            case ("GET", "/workspace/members"): return try await workspaceMembers(query)
            case ("POST", "/invalidate"): return try await invalidate(request, query)
            case ("GET", "/shadow"): return try await shadow(query)
            case ("POST", "/shadow/reset"): return try resetShadow(request, query)
            case ("GET", "/readyz"): return try await operations.readiness(query)
            default: return try operations.respondAtOnce(to: request, query) ?? Self.unrouted(request)
            }
        } catch {
            return error
        }
    }

    /// The query's parameters, or the 400 for a broken percent-encoding.
    private static func query(
        _ request: HTTPServing.HTTPRequest
    ) throws(ServerResponse) -> [(name: String, value: String)] {
        guard let items = request.queryItems() else {
            throw .error(400, "bad-request", "malformed percent-encoding in the query")
        }
        return items
    }

    /// 405 for a path served with another method, 404 for any other.
    private static func unrouted(_ request: HTTPServing.HTTPRequest) -> ServerResponse {
        switch request.path {
        case "/decision", "/workspace/members", "/shadow", "/healthz", "/readyz", "/metrics", "/openapi.json":
            .error(405, "method-not-allowed", "only GET is served here", headerFields: [("Allow", "GET")])
        case "/invalidate", "/shadow/reset":
            .error(405, "method-not-allowed", "only POST is served here", headerFields: [("Allow", "POST")])
        default:
            .error(
                404,
                "not-found",
                "no such path (try /decision, /workspace/members, /invalidate, /shadow or /shadow/reset)"
            )
        }
    }

    /// Refuses an administrative request a browser sends for a page of another site, and one
    /// without the admin token, when one is set.
    private func checkAdmin(_ request: HTTPServing.HTTPRequest) throws(ServerResponse) {
        // A POST without a body needs no preflight: any page open in a browser on this machine
        // could drop every answer (on loopback no token is required). Browsers mark such requests;
        // the server's callers, app servers, never send the field.
        if let site = request.header("sec-fetch-site")?.lowercased(), site == "cross-site" || site == "same-site" {
            throw .error(
                403,
                "cross-site",
                "\(request.method) \(request.path) is refused from a web page of another site (Sec-Fetch-Site: \(site))"
            )
        }
        guard let adminToken else { return }
        try adminToken.check(request)
    }

    /// Answers `GET /decision`: the customer's Decision.
    ///
    /// `/decision?transactionId=…[&environment=sandbox|production][&entitlement=…]…[&explain=true]`:
    /// the customer's Decision as the JSON of `Decision.jsonBytes`, with grants and denials when
    /// `explain` is true, ending with `groupsSource` (`live`, `cache` or `stale`),
    /// `groupsFetchedAt` (when Apple sent the groups), `policyRevision` and `decisionId` (the id of
    /// this decision, also in its decision-log line). With
    /// `&whyNot=CAPABILITY`, the answer is `{"decision":…,"explanation":…}`: the same Decision, and
    /// `Explanation.jsonBytes` for that capability, from the same groups and policy snapshot (400
    /// `undeclared-capability` when the policy does not declare it).
    /// `GET /decision` answered on the event loop: a decision from this process's copy, or the
    /// refusal of a malformed request; `nil` for everything else (`whyNot`, a miss).
    private func decisionAtOnce(_ query: [(name: String, value: String)]) throws(ServerResponse) -> ServerResponse? {
        let parameters = try Parameters(query, allowed: Self.decisionParameters)
        guard parameters.all("whyNot").isEmpty else { return nil }
        let explain = try parameters.flag("explain")
        let transactionID = try parameters.required("transactionId")
        let environment = try parameters.environment()
        guard clients[environment] != nil else {
            throw .error(400, "bad-request", "environment \(environment) is not configured")
        }
        let served: ServedDecision?
        do {
            served = try service.decisionIfHeldHere(
                anyTransactionID: transactionID,
                entitlements: Set(parameters.all("entitlement")),
                environment: environment
            )
        } catch {
            operations.metrics.refused(error.code.description)
            throw Self.failure(error)
        }
        guard let served else { return nil }
        operations.metrics.served(served.source)
        return .json(
            200,
            served.jsonBytes(includingProvenance: explain, pretty: false),
            headerFields: [("X-Decision-Id", served.decisionID)]
        )
    }

    private static let decisionParameters: Set<String> = [
        "transactionId", "environment", "entitlement", "explain", "whyNot",
    ]

    private func decision(_ query: [(name: String, value: String)]) async throws(ServerResponse) -> ServerResponse {
        let parameters = try Parameters(query, allowed: Self.decisionParameters)
        let explain = try parameters.flag("explain")
        // Checked before the fetch: a malformed request must not spend Apple's rate budget, nor
        // must a capability the policy does not declare.
        let capability = parameters.all("whyNot").isEmpty ? nil : Capability(try parameters.required("whyNot"))
        let context = EvaluationContext(
            environment: try parameters.environment(),
            entitlements: Set(parameters.all("entitlement"))
        )
        if let capability, service.policies.current.kind(of: capability) == nil {
            try Self.explain(
                capability,
                with: service.policies.current,
                for: GetCustomerGroupsResponse(groups: []),
                in: context
            )
        }
        let served = try await evaluate(parameters)
        let body = served.jsonBytes(includingProvenance: explain, pretty: false)
        let decisionID: [(name: String, value: String)] = [("X-Decision-Id", served.decisionID)]
        guard let capability else {
            return .json(200, body, headerFields: decisionID)
        }
        let explanation = try Self.explain(capability, with: served.policy, for: served.groups, in: context)
        return .json(
            200,
            Array(#"{"decision":"#.utf8) + body + Array(#","explanation":"#.utf8)
                + explanation.jsonBytes(pretty: false) + Array("}".utf8),
            headerFields: decisionID
        )
    }

    /// The explanation of `capability`, or the 400 answer saying why there is none.
    @discardableResult
    private static func explain(
        _ capability: Capability,
        with policy: Policy,
        for groups: GetCustomerGroupsResponse,
        in context: EvaluationContext
    ) throws(ServerResponse) -> Explanation {
        do {
            return try policy.explain(capability, for: groups, in: context)
        } catch {
            throw .error(400, error.code.description, error.message)
        }
    }

    /// Answers `GET /workspace/members`: every member of a shared workspace's group.
    ///
    /// `/workspace/members?transactionId=…&groupId=…[&environment=…][&entitlement=…]…`: every
    /// member of the group, for a customer whose Decision puts them in a workspace of that group
    /// (403 otherwise), with the customer's workspace memberships there:
    /// `{"groupId":…,"workspaces":[{"workspace":…,"role":…}],"members":[{"appTransactionId":…}]}`.
    /// When Apple answers `GroupNotFoundError`, the customer's cached groups are forgotten.
    private func workspaceMembers(
        _ query: [(name: String, value: String)]
    ) async throws(ServerResponse) -> ServerResponse {
        let parameters = try Parameters(query, allowed: ["transactionId", "groupId", "environment", "entitlement"])
        let groupID = try parameters.required("groupId")
        let served = try await evaluate(parameters)
        let environment = try parameters.environment()
        let memberships = served.decision.workspaces.filter { $0.groupID == groupID }
        guard !memberships.isEmpty else {
            return .error(403, "not-a-member", "the customer is in no workspace of group \(groupID)")
        }
        guard let client = clients[environment] else {
            throw .error(400, "bad-request", "environment \(environment) is not configured")
        }
        let list: [GroupMemberEntry]
        do {
            list = try await allMembers(of: groupID, using: client)
        } catch {
            if error.code == .groupNotFound {
                // Best effort: the answer below is the group's failure either way, and the shared
                // cache's own failure reaches the service's observer.
                try? await service.invalidate(anyTransactionID: try parameters.required("transactionId"))
            }
            throw Self.failure(error)
        }
        let body = JSON.object([
            ("groupId", .string(groupID)),
            (
                "workspaces",
                .array(
                    memberships.map {
                        .object([("workspace", .string($0.workspace.id)), ("role", .string($0.role.rawValue))])
                    }
                )
            ),
            ("members", .array(list.map { .object([("appTransactionId", .string($0.appTransactionID))]) })),
        ])
        return .json(200, body.bytes)
    }

    /// Answers `POST /invalidate`: forgets one customer's groups (`transactionId=…`, the id their
    /// decisions are asked with), every member's of a group (`groupId=…`) or everyone's
    /// (`all=true`), here and in Redis.
    ///
    /// A 200 means that no server of the fleet serves the old answer from then on: the service
    /// returns only once every server has stopped serving its own copy (see the DocC article
    /// "Serving decisions at fleet scale", section "Invalidation across the fleet").
    private func invalidate(
        _ request: HTTPServing.HTTPRequest,
        _ query: [(name: String, value: String)]
    ) async throws(ServerResponse) -> ServerResponse {
        try checkAdmin(request)
        let parameters = try Parameters(query, allowed: ["transactionId", "groupId", "all"])
        // One target per request: a second one was skipped without a word before.
        let given = ["transactionId", "groupId", "all"].filter { !parameters.all($0).isEmpty }
        if given.count > 1 {
            throw .error(
                400,
                "bad-request",
                "give one of transactionId, groupId or all=true, not \(given.joined(separator: " and "))"
            )
        }
        // A shared cache that was not updated is a 503: the notification handler calling this
        // must retry, or the other servers keep the old answer for its time to live.
        let all = try parameters.flag("all")
        let groupID = all ? nil : parameters.all("groupId").first
        var transactionID = "all"
        if let groupID {
            transactionID = groupID
        } else if !all {
            transactionID = try parameters.required("transactionId")
        }
        do {
            if all {
                try await service.invalidateAll()
            } else if let groupID {
                try await service.invalidate(groupID: groupID)
            } else {
                try await service.invalidate(anyTransactionID: transactionID)
            }
        } catch  where error.code == .invalidArgument {
            throw .error(400, error.code.description, error.message)
        } catch {
            // The caller learns what to do, not the shared cache's own words (which may name the
            // server, its keys or the customer); the observer's log line has the details.
            throw .error(
                503,
                error.code.description,
                "the shared cache did not take the invalidation: retry (this server has forgotten the "
                    + "answers, other servers keep them until the cache takes it)"
            )
        }
        let what = groupID.map { ("invalidatedGroup", JSON.string($0)) } ?? ("invalidated", .string(transactionID))
        return .json(200, JSON.object([what]).bytes)
    }

    /// Answers `GET /shadow`: what the candidate policy would have changed.
    ///
    /// The report of `--candidate-policies` on the decisions served since it started, as
    /// `ShadowReport.jsonBytes`, once the decisions served before the request have been compared
    /// (a wait bounded by the service's comparison queue). Without a candidate, or while it does
    /// not load, its `candidateRevision` is null and it counts nothing. Readers of an unchanged
    /// report share one serialization.
    private func shadow(_ query: [(name: String, value: String)]) async throws(ServerResponse) -> ServerResponse {
        _ = try Parameters(query, allowed: [])
        await service.waitForShadowComparisons()
        return .json(200, service.shadowReportJSON())
    }

    /// Answers `POST /shadow/reset`: starts the shadow report again from now, and answers it (no
    /// decision counted yet, `since` now).
    private func resetShadow(
        _ request: HTTPServing.HTTPRequest,
        _ query: [(name: String, value: String)]
    ) throws(ServerResponse) -> ServerResponse {
        try checkAdmin(request)
        _ = try Parameters(query, allowed: [])
        service.resetShadowReport()
        return .json(200, service.shadowReportJSON())
    }

    /// The customer's Decision from the library's service.
    private func evaluate(_ parameters: Parameters) async throws(ServerResponse) -> ServedDecision {
        let transactionID = try parameters.required("transactionId")
        let environment = try parameters.environment()
        guard clients[environment] != nil else {
            throw .error(400, "bad-request", "environment \(environment) is not configured")
        }
        do {
            let served = try await service.decision(
                anyTransactionID: transactionID,
                entitlements: Set(parameters.all("entitlement")),
                environment: environment
            )
            operations.metrics.served(served.source)
            return served
        } catch {
            operations.metrics.refused(error.code.description)
            throw Self.failure(error)
        }
    }

    /// Every page of a group's members, bounded, each page through the service's rate-limit gate.
    private func allMembers(
        of groupID: String,
        using client: AppStoreGroupsClient
    ) async throws(AppStoreGroupsError) -> [GroupMemberEntry] {
        var list: [GroupMemberEntry] = []
        let maximumMembers = Self.maximumMembers
        for try await member in try service.rateLimitGate.allGroupMembers(groupID: groupID, limit: 100, using: client) {
            guard list.count < maximumMembers else {
                throw AppStoreGroupsError(
                    code: .responseTooLarge,
                    message: "group \(groupID) has more than \(maximumMembers) members"
                )
            }
            list.append(member)
        }
        return list
    }

    /// The answer for a failed fetch: nothing granted, and what went wrong.
    static func failure(_ error: any Error) -> ServerResponse {
        guard let error = error as? AppStoreGroupsError else {
            return .error(502, "fetch-failed", "\(error)")
        }
        var details: [(String, JSON)] = []
        if let status = error.httpStatus { details.append(("httpStatus", .number(status))) }
        if let code = error.apiErrorCode { details.append(("apiErrorCode", .number(Int(code)))) }
        var headerFields: [(String, String)] = []
        let status: Int
        switch error.code {
        case .invalidArgument, .invalidTransactionID, .invalidGroupID:
            status = 400
        case .transactionIDNotFound, .groupNotFound:
            status = 404
        case .rateLimitExceeded:
            status = 503
            if let instant = error.retryAfter {
                let seconds = max(1, Int(instant.timeIntervalSinceNow.rounded(.up)))
                headerFields.append(("Retry-After", String(seconds)))
            }
        case .timeout:
            status = 504
        default:
            status = 502
        }
        return .error(status, error.code.description, error.description, details: details, headerFields: headerFields)
    }
}

/// A request's query parameters, checked against the names an endpoint accepts.
struct Parameters {
    private let values: [String: [String]]

    /// Every name must be allowed; only `entitlement` may repeat.
    init(_ query: [(name: String, value: String)], allowed: Set<String>) throws(ServerResponse) {
        var values: [String: [String]] = [:]
        for (name, value) in query {
            guard allowed.contains(name) else {
                let names = allowed.isEmpty ? "none" : allowed.sorted().joined(separator: ", ")
                throw .error(400, "bad-request", "unknown parameter '\(name)' (this endpoint takes \(names))")
            }
            guard name == "entitlement" || values[name] == nil else {
                throw .error(400, "bad-request", "parameter '\(name)' given more than once")
            }
            values[name, default: []].append(value)
        }
        self.values = values
    }

    func all(_ name: String) -> [String] { values[name] ?? [] }

    func required(_ name: String) throws(ServerResponse) -> String {
        guard let value = values[name]?.first, !value.isEmpty else {
            throw .error(400, "bad-request", "missing parameter '\(name)'")
        }
        return value
    }

    /// `environment`: `sandbox` (the default: Apple serves the groups endpoints only there today)
    /// or `production`, in any case.
    func environment() throws(ServerResponse) -> StoreEnvironment {
        switch values["environment"]?.first?.lowercased() {
        case nil, "sandbox": return .sandbox
        case "production": return .production
        case let other?: throw .error(400, "bad-request", "unknown environment '\(other)' (sandbox or production)")
        }
    }

    /// A boolean parameter: `true` or `false`, absent meaning false.
    func flag(_ name: String) throws(ServerResponse) -> Bool {
        switch values[name]?.first {
        case nil, "false": return false
        case "true": return true
        case let other?: throw .error(400, "bad-request", "parameter '\(name)' must be true or false, not '\(other)'")
        }
    }
}
