import AppStoreGroups
import GroupPolicy

/// The server's two endpoints: a customer's Decision, and the members of a shared workspace.
///
/// It trusts its caller: `entitlement` parameters must come from transactions your backend has
/// verified, so run it on loopback (or a private network) next to that backend, never open to
/// apps. Every failure grants nothing: the answer is an error, never a partial Decision.
struct DecisionService: Sendable {
    /// The most members listed for one group (Apple sends 100 a page).
    static let maximumMembers = 10_000

    let store: PolicyStore
    let clients: [StoreEnvironment: AppStoreGroupsClient]
    let groups: ExpiringCache<CacheKey, GetCustomerGroupsResponse>
    let members: ExpiringCache<CacheKey, [GroupMemberEntry]>

    struct CacheKey: Hashable, Sendable {
        var environment: StoreEnvironment
        var id: String
    }

    func respond(to request: ServerRequest) async -> ServerResponse {
        guard request.method == "GET" else {
            return .error(405, "method-not-allowed", "only GET is served", headerFields: [("Allow", "GET")])
        }
        do {
            switch request.path {
            case "/decision": return try await decision(request)
            case "/workspace/members": return try await workspaceMembers(request)
            default: return .error(404, "not-found", "no such path (try /decision or /workspace/members)")
            }
        } catch {
            return error
        }
    }

    /// Answers `GET /decision`: the customer's Decision.
    ///
    /// `/decision?transactionId=…[&environment=sandbox|production][&entitlement=…]…[&explain=true]`:
    /// the customer's Decision as the JSON of `Decision.jsonBytes`, with grants and denials when
    /// `explain` is true.
    private func decision(_ request: ServerRequest) async throws(ServerResponse) -> ServerResponse {
        let parameters = try Parameters(
            request.query,
            allowed: ["transactionId", "environment", "entitlement", "explain"]
        )
        let explain = try parameters.flag("explain")
        let (decision, _) = try await evaluate(parameters)
        return .json(200, decision.jsonBytes(includingProvenance: explain, pretty: false))
    }

    /// Answers `GET /workspace/members`: every member of a shared workspace's group.
    ///
    /// `/workspace/members?transactionId=…&groupId=…[&environment=…][&entitlement=…]…`: every
    /// member of the group, for a customer whose Decision puts them in a workspace of that group
    /// (403 otherwise), with the customer's workspace memberships there:
    /// `{"groupId":…,"workspaces":[{"workspace":…,"role":…}],"members":[{"appTransactionId":…}]}`.
    private func workspaceMembers(_ request: ServerRequest) async throws(ServerResponse) -> ServerResponse {
        let parameters = try Parameters(
            request.query,
            allowed: ["transactionId", "groupId", "environment", "entitlement"]
        )
        let groupID = try parameters.required("groupId")
        let (decision, client) = try await evaluate(parameters)
        let memberships = decision.workspaces.filter { $0.groupID == groupID }
        guard !memberships.isEmpty else {
            return .error(403, "not-a-member", "the customer is in no workspace of group \(groupID)")
        }
        let list: [GroupMemberEntry]
        do {
            list = try await members.value(for: CacheKey(environment: client.storeEnvironment, id: groupID)) {
                try await Self.allMembers(of: groupID, using: client)
            }
        } catch {
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

    /// Fetches (or takes from the cache) the customer's groups and evaluates them with the policy
    /// serving now.
    ///
    /// The cache holds Apple's answers, not decisions, so a policy reload applies to the next
    /// request.
    private func evaluate(
        _ parameters: Parameters
    ) async throws(ServerResponse) -> (Decision, AppStoreGroupsClient) {
        let transactionID = try parameters.required("transactionId")
        let environment = try parameters.environment()
        guard let client = clients[environment] else {
            throw .error(400, "bad-request", "environment \(environment) is not configured")
        }
        let response: GetCustomerGroupsResponse
        do {
            response = try await groups.value(for: CacheKey(environment: environment, id: transactionID)) {
                try await client.customerGroups(anyTransactionID: transactionID)
            }
        } catch {
            throw Self.failure(error)
        }
        let context = EvaluationContext(
            environment: client.storeEnvironment,
            entitlements: Set(parameters.all("entitlement"))
        )
        return (store.evaluate(response, in: context), client)
    }

    /// The bytes a customer's groups take in the cache: every string's UTF-8 bytes, plus an
    /// overhead per string and per element.
    @Sendable static func estimatedBytes(_ response: GetCustomerGroupsResponse) -> Int {
        response.groups.reduce(64) { total, group in
            total + 96 + group.groupID.utf8.count + group.groupType.rawValue.utf8.count
                + group.roles.reduce(0) { $0 + 64 + $1.productID.utf8.count + $1.role.rawValue.utf8.count }
        }
    }

    /// The bytes a group's members take in the cache, estimated as for groups.
    @Sendable static func estimatedBytes(_ members: [GroupMemberEntry]) -> Int {
        members.reduce(32) { $0 + 32 + $1.appTransactionID.utf8.count }
    }

    /// Every page of a group's members, bounded.
    private static func allMembers(
        of groupID: String,
        using client: AppStoreGroupsClient
    ) async throws(AppStoreGroupsError) -> [GroupMemberEntry] {
        var list: [GroupMemberEntry] = []
        for try await member in try client.allGroupMembers(groupID: groupID, limit: 100) {
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
                let names = allowed.sorted().joined(separator: ", ")
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
