import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

/// group-decision-server, run as the built binary on 127.0.0.1 against the fake App Store, and asked over real HTTP.
@Suite("Decision server: routes and answers", .requires(.pythonCryptography))
struct DecisionServerTests {
    @Test(
        "/decision answers exactly Policy.evaluate's JSON for the fake's response (with whyNot, Policy.explain's beside it), and caches Apple's answer"
    )
    func decisionMatchesTheEngine() async throws {
        let server = try await DecisionServerProcess.start()
        let policy = try Policy(contentsOf: DecisionServerProcess.policies)
        let revision = policy.revision
        // The fake's answer, fetched in a namespace of its own so the server's log stays its own.
        let response = try await FakeAppStore().client().customerGroups(anyTransactionID: "ok1")
        let sandbox = EvaluationContext(environment: .sandbox, entitlements: ["com.example.teams.pro"])

        let first = try await server.get(
            "/decision?transactionId=ok1&environment=sandbox&entitlement=com.example.teams.pro"
        )
        #expect(first.status == 200)
        #expect(first.contentType == "application/json; charset=utf-8")
        #expect(first.decisionText == policy.evaluate(response, in: sandbox).jsonString(pretty: false))
        #expect(
            first.text.contains(#""workspaces":[{"workspace":"team","groupId":"900000000000000000","role":"admin"}]"#)
        )
        // Freshness follows the Decision: live, then cache with the same fetch time; each decision
        // has an id of its own (UUID version 7, in order).
        let fetchedAt = try #require(first.groupsFetchedAt)
        #expect(fetchedAt.count == 24 && fetchedAt.hasSuffix("Z"))
        func freshness(_ source: String, _ answer: DecisionServerProcess.Answer) throws -> String {
            let id = try #require(answer.decisionID)
            #expect(DecisionIDs.isVersion7(id))
            return #","groupsSource":"\#(source)","groupsFetchedAt":"\#(fetchedAt)","policyRevision":"\#(revision)","#
                + #""decisionId":"\#(id)"}"#
        }
        #expect(first.text.hasSuffix(try freshness("live", first)))

        let explained = try await server.get(
            "/decision?transactionId=ok1&entitlement=com.example.teams.pro&explain=true"
        )
        #expect(explained.status == 200)
        #expect(
            explained.decisionText
                == policy.evaluate(response, in: sandbox).jsonString(includingProvenance: true, pretty: false)
        )
        #expect(explained.text.hasSuffix(try freshness("cache", explained)))
        #expect(try #require(first.decisionID) < #require(explained.decisionID))

        let production = try await server.get("/decision?transactionId=ok1&environment=production")
        #expect(production.status == 200)
        #expect(
            production.decisionText == policy.evaluate(response, in: EvaluationContext()).jsonString(pretty: false)
        )
        #expect(production.groupsSource == "live")
        #expect(production.text.contains(#""capabilities":[],"#))

        // With whyNot, the Decision and Policy.explain's JSON beside it: without the Pro entitlement,
        // templates are a near miss of the rule that requires it.
        let plain = EvaluationContext(environment: .sandbox)
        let whyNot = try await server.get("/decision?transactionId=ok1&whyNot=team.templates&explain=true")
        #expect(whyNot.status == 200)
        let explanation = try policy.explain("team.templates", for: response, in: plain)
        let evaluated = policy.evaluate(response, in: plain).jsonString(includingProvenance: true, pretty: false)
        #expect(whyNot.text.hasPrefix(#"{"decision":"# + evaluated.dropLast() + #","groupsSource":"cache","#))
        #expect(whyNot.text.hasSuffix(#"},"explanation":"# + explanation.jsonString(pretty: false) + "}"))
        #expect(whyNot.text.contains(#"{"condition":"entitlements","missing":["com.example.teams.pro"]}"#))

        // One fetch per environment: the other sandbox answers came from the cache.
        let fetches = try await server.appStore.log().map(\.path)
        #expect(fetches == ["/groups/v1/currentGroups/ok1", "/groups/v1/currentGroups/ok1"])
    }

    @Test(
        "/workspace/members lists every page, fetched again on every call, only for a member of the group's workspace"
    )
    func workspaceMembers() async throws {
        let server = try await DecisionServerProcess.start()
        let path = "/workspace/members?transactionId=ingroup_paged_team&groupId=paged_team"
        let expected = """
            {"groupId":"paged_team","workspaces":[{"workspace":"team","role":"admin"}],"members":[\
            {"appTransactionId":"a1"},{"appTransactionId":"a2"},{"appTransactionId":"a3"},\
            {"appTransactionId":"a4"},{"appTransactionId":"a5"}]}
            """
        let first = try await server.get(path)
        #expect(first.status == 200)
        #expect(first.text == expected)
        let again = try await server.get(path)
        #expect(again.text == expected)

        let outsider = try await server.get("/workspace/members?transactionId=ingroup_paged_team&groupId=paged_other")
        #expect(outsider.status == 403)
        #expect(
            outsider.text
                == #"{"error":{"code":"not-a-member","message":"the customer is in no workspace of group paged_other"}}"#
        )

        // Every page, on each of the two calls.
        let pages = ["", "&paginationToken=page2-token", "&paginationToken=page3%2Ftoken%2B%3D%26x"]
            .map { "/groups/v1/group/paged_team?limit=100\($0)" }
        let customer = "/groups/v1/currentGroups/ingroup_paged_team"
        #expect(try await server.appStore.log().map(\.path) == [customer] + pages + pages)
    }

    @Test("a failed fetch grants nothing, says why, and is not cached")
    func failuresFailClosed() async throws {
        let server = try await DecisionServerProcess.start()
        // What the library itself says about this answer, fetched in a namespace of its own.
        let reference = try #require(
            await expectError { try await FakeAppStore().client().customerGroups(anyTransactionID: "unauthorized") }
        )
        for _ in 0..<2 {
            let answer = try await server.get("/decision?transactionId=unauthorized&entitlement=com.example.teams.pro")
            #expect(answer.status == 502)
            #expect(
                answer.text
                    == #"{"error":{"code":"unauthorized","message":"\#(reference.description)","httpStatus":401}}"#
            )
        }
        let unknown = try await server.get("/decision?transactionId=transactionIdNotFound")
        #expect(unknown.status == 404)
        #expect(unknown.text.hasPrefix(#"{"error":{"code":"transaction-id-not-found","#))
        #expect(unknown.text.hasSuffix(#""httpStatus":404,"apiErrorCode":4040010}}"#))

        let fetched = ["unauthorized", "unauthorized", "transactionIdNotFound"]
        #expect(try await server.appStore.log().map(\.path) == fetched.map { "/groups/v1/currentGroups/\($0)" })
    }

    @Test(
        "requests the server does not serve are refused with a JSON error",
        arguments: [
            ("/decision", 400, #"{"error":{"code":"bad-request","message":"missing parameter 'transactionId'"}}"#),
            (
                "/decision?transactionId=ok&entitlements=x", 400,
                #"{"error":{"code":"bad-request","message":"unknown parameter 'entitlements' (this endpoint takes entitlement, environment, explain, transactionId, whyNot)"}}"#
            ),
            (
                "/decision?transactionId=ok&transactionId=ok", 400,
                #"{"error":{"code":"bad-request","message":"parameter 'transactionId' given more than once"}}"#
            ),
            (
                "/decision?transactionId=ok&environment=staging", 400,
                #"{"error":{"code":"bad-request","message":"unknown environment 'staging' (sandbox or production)"}}"#
            ),
            (
                "/decision?transactionId=ok&explain=yes", 400,
                #"{"error":{"code":"bad-request","message":"parameter 'explain' must be true or false, not 'yes'"}}"#
            ),
            (
                "/decision?transactionId=ok1&whyNot=team.template", 400,
                #"{"error":{"code":"undeclared-capability","message":"undeclared capability 'team.template' (did you mean 'team.templates'?)"}}"#
            ),
            (
                "/decision?transactionId=ok1&whyNot=", 400,
                #"{"error":{"code":"bad-request","message":"missing parameter 'whyNot'"}}"#
            ),
            (
                "/workspace/members?transactionId=ok", 400,
                #"{"error":{"code":"bad-request","message":"missing parameter 'groupId'"}}"#
            ),
            // The shadow routes refuse other methods and any parameter.
            ("POST /shadow", 405, #"{"error":{"code":"method-not-allowed","message":"only GET is served here"}}"#),
            ("/shadow/reset", 405, #"{"error":{"code":"method-not-allowed","message":"only POST is served here"}}"#),
            (
                "/shadow?pretty=true", 400,
                #"{"error":{"code":"bad-request","message":"unknown parameter 'pretty' (this endpoint takes none)"}}"#
            ),
            (
                "/decisions", 404,
                #"{"error":{"code":"not-found","message":"no such path (try /decision, /workspace/members, /invalidate, /shadow or /shadow/reset)"}}"#
            ),
        ]
    )
    func badRequests(path: String, status: Int, body: String) async throws {
        let server = try await DecisionServerProcess.start()
        let answer = try await path.hasPrefix("POST ") ? server.post(String(path.dropFirst(5))) : server.get(path)
        #expect(answer.status == status)
        #expect(answer.text == body)
        #expect(try await server.appStore.log().isEmpty)
    }
}
