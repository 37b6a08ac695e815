import AppStoreGroups
import Foundation
import GroupPolicy
import ServingTestSupport
import Testing

/// `group-policy fetch`, run as the built binary against the loopback server.
@Suite("CLI fetch")
struct FetchCommandTests {
    /// The built `group-policy` next to the test runner, or in the package's default build folder.
    static func binary() throws -> URL {
        var candidates: [URL] = []
        if let runner = Bundle.main.executableURL {
            candidates.append(runner.deletingLastPathComponent().appending(path: "group-policy"))
        }
        candidates.append(TestFiles.packageRoot.appending(path: ".build/debug/group-policy"))
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "build group-policy first (swift build); looked in \(candidates.map(\.path))")
    }

    /// The parent's environment without any App Store settings, plus `extra`.
    static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APP_STORE_") }.merging(extra) { $1 }
    }

    static func credentialFlags(_ server: FakeAppStore, key: String = "test-key.p8") -> [String] {
        [
            "--key-id", FakeAppStore.keyID, "--issuer-id", FakeAppStore.issuerID,
            "--bundle-id", FakeAppStore.bundleID, "--private-key", TestFiles.fixture(key).path,
            "--base-url", server.baseURL.absoluteString,
        ]
    }

    /// `--timeout` for a command that must get its answer, or fail the way it names.
    ///
    /// The default 10 s bounds the whole request, retries and waits included: on a busy machine a
    /// refused connection's three attempts, or one exchange with the fake App Store, could outlast
    /// it, and the command then printed a timeout (or fewer attempts) instead. The test of that
    /// default gives no `--timeout`.
    static let answerTimeout = ["--timeout", "60"]

    /// Runs `group-policy` and checks that no output holds the key or any token the server saw.
    static func run(
        _ arguments: [String],
        server: FakeAppStore,
        environment: [String: String] = [:],
        key: String = "test-key.p8",
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) async throws -> ProcessResult {
        let result = try await runProcess(try binary(), arguments, environment: Self.environment(environment))
        let output = result.standardOutput + result.standardError
        let tokens = try await server.log().compactMap(\.token)
        for token in tokens {
            #expect(!output.contains(token), "a token was printed", sourceLocation: sourceLocation)
            let signature = String(token.split(separator: ".").last ?? "")
            #expect(!output.contains(signature), "a token's signature was printed", sourceLocation: sourceLocation)
        }
        let pem = try TestFiles.text(key)
        #expect(!output.contains("PRIVATE KEY"), sourceLocation: sourceLocation)
        for line in SecretScan.keyMaterial(pem) {
            #expect(!output.contains(line), "key material was printed", sourceLocation: sourceLocation)
        }
        return result
    }

    @Test("fetch groups prints Apple's answer as pretty JSON, exit 0", .requires(.pythonCryptography))
    func groups() async throws {
        let server = try await FakeAppStore()
        let result = try await Self.run(
            ["fetch", "groups", "--transaction-id", "ok"] + Self.credentialFlags(server) + Self.answerTimeout,
            server: server
        )
        #expect(result.status == 0)
        #expect(result.standardOutput == GetCustomerGroupsResponse.sandboxPlaceholder.jsonString(pretty: true) + "\n")
        #expect(result.standardError == "")
        let requests = try await server.log()
        #expect(requests.map(\.path) == ["/groups/v1/currentGroups/ok"])
        #expect(requests.map(\.authorization) == ["ok"])
    }

    @Test("credentials come from the environment when no flags are given", .requires(.pythonCryptography))
    func credentialsFromEnvironment() async throws {
        let server = try await FakeAppStore()
        let result = try await Self.run(
            ["fetch", "groups", "--transaction-id", "empty", "--base-url", server.baseURL.absoluteString]
                + Self.answerTimeout,
            server: server,
            environment: [
                "APP_STORE_KEY_ID": FakeAppStore.keyID,
                "APP_STORE_ISSUER_ID": FakeAppStore.issuerID,
                "APP_STORE_BUNDLE_ID": FakeAppStore.bundleID,
                "APP_STORE_PRIVATE_KEY_PATH": TestFiles.fixture("test-key.p8").path,
            ]
        )
        #expect(result.status == 0)
        #expect(result.standardOutput == GetCustomerGroupsResponse(groups: []).jsonString(pretty: true) + "\n")
        #expect(result.standardError == "")
    }

    @Test("fetch groups --policy prints the Decision for the sandbox environment", .requires(.pythonCryptography))
    func groupsWithPolicy() async throws {
        let server = try await FakeAppStore()
        let policyPath = TestFiles.packageRoot.appending(path: "Policies/team-workspace.json").path
        let result = try await Self.run(
            [
                "fetch", "groups", "--transaction-id", "ok", "--policy", policyPath,
                "--entitlement", "com.example.teams.pro", "--explain",
            ] + Self.credentialFlags(server) + Self.answerTimeout,
            server: server
        )
        let policy = try Policy(contentsOf: policyPath)
        let decision = policy.evaluate(
            .sandboxPlaceholder,
            in: EvaluationContext(environment: .sandbox, entitlements: ["com.example.teams.pro"])
        )
        #expect(result.status == 0)
        #expect(result.standardOutput == decision.jsonString(includingProvenance: true) + "\n")
        #expect(result.standardError == "")
    }

    @Test(
        "fetch members --all follows every page with the same limit and prints one list",
        .requires(.pythonCryptography)
    )
    func allMembers() async throws {
        let server = try await FakeAppStore()
        let result = try await Self.run(
            ["fetch", "members", "--group-id", "paged", "--limit", "2", "--all"] + Self.credentialFlags(server)
                + Self.answerTimeout,
            server: server
        )
        let expected = GetGroupMembersResponse(
            members: ["a1", "a2", "a3", "a4", "a5"].map { GroupMemberEntry(appTransactionID: $0) },
            hasMore: false
        )
        #expect(result.status == 0)
        #expect(result.standardOutput == expected.jsonString(pretty: true) + "\n")
        #expect(result.standardError == "")
        #expect(try await server.log().map { $0.query["limit"] } == [["2"], ["2"], ["2"]])
    }

    @Test("fetch members without --all prints one page with its token", .requires(.pythonCryptography))
    func onePage() async throws {
        let server = try await FakeAppStore()
        let result = try await Self.run(
            ["fetch", "members", "--group-id", "paged", "--limit", "2"] + Self.credentialFlags(server)
                + Self.answerTimeout,
            server: server
        )
        let expected = GetGroupMembersResponse(
            members: [GroupMemberEntry(appTransactionID: "a1"), GroupMemberEntry(appTransactionID: "a2")],
            hasMore: true,
            paginationToken: "page2-token"
        )
        #expect(result.status == 0)
        #expect(result.standardOutput == expected.jsonString(pretty: true) + "\n")
    }

    @Test(
        "fetch members --all on a pagination cycle (A, B, A) ends with one Error: line",
        .requires(.pythonCryptography)
    )
    func paginationCycle() async throws {
        let server = try await FakeAppStore()
        let result = try await Self.run(
            ["fetch", "members", "--group-id", "cycle", "--all"] + Self.credentialFlags(server) + Self.answerTimeout,
            server: server
        )
        // The first two pages' members were printed as they came, in a document left unterminated.
        #expect(result.status == 2)
        #expect(result.standardOutput == (try Self.unterminatedListing(["c-first", "c-token-a"])))
        #expect(
            result.standardError
                == "Error: the App Store sent a paginationToken it had sent before (page 3 repeats an earlier one), "
                + "so the listing would never end (HTTP 200, at paginationToken)\n"
        )
        #expect(try await server.log().count == 3)
    }

    /// What `--all` has printed when the listing fails after pages holding `members`: the start
    /// of the document it prints whole on success, which does not parse as JSON.
    static func unterminatedListing(_ members: [String]) throws -> String {
        let complete = GetGroupMembersResponse(
            members: members.map { GroupMemberEntry(appTransactionID: $0) },
            hasMore: false
        )
        .jsonString(pretty: true)
        let end = try #require(complete.range(of: "\n  ],"))
        return String(complete[..<end.lowerBound])
    }

    @Test(
        "fetch members --all prints each page as it arrives; a later page's failure ends it with one Error: line",
        .requires(.pythonCryptography)
    )
    func allMembersStreamed() async throws {
        let server = try await FakeAppStore()
        let result = try await Self.run(
            ["fetch", "members", "--group-id", "expiring", "--limit", "2", "--all"] + Self.credentialFlags(server)
                + Self.answerTimeout,
            server: server
        )
        #expect(result.status == 1)
        #expect(result.standardOutput == (try Self.unterminatedListing(["a1", "a2"])))
        #expect(
            result.standardError
                == #"Error: the App Store answered PaginationTokenExpiredError (HTTP 400, errorCode 4000017, "#
                + #"errorMessage "Pagination token expired.")"# + "\n"
        )
        #expect(try await server.log().count == 2)
    }

    @Test(
        "fetch members --all of an empty group prints the empty listing",
        .requires(.pythonCryptography)
    )
    func allMembersEmpty() async throws {
        let server = try await FakeAppStore()
        let result = try await Self.run(
            ["fetch", "members", "--group-id", "empty", "--all"] + Self.credentialFlags(server) + Self.answerTimeout,
            server: server
        )
        #expect(result.status == 0)
        #expect(
            result.standardOutput == GetGroupMembersResponse(members: [], hasMore: false).jsonString(pretty: true)
                + "\n"
        )
    }

    @Test(
        "a body that never ends is refused at the size limit, at once and in one line",
        .requires(.pythonCryptography)
    )
    func endlessBody() async throws {
        let server = try await FakeAppStore()
        let result = try await Self.run(
            ["fetch", "groups", "--transaction-id", "endlesschunked", "--timeout", "600"]
                + Self.credentialFlags(server),
            server: server
        )
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "Error: the answer's body is larger than 1048576 bytes\n")
        // Waiting for the session's cancel instead of ending the call at the limit took the whole
        // timeout (and 2.5 GB): with a 600-s timeout, ending well before it can only be the limit.
        // (Under a full parallel test run on 2 busy cores, starting the process and streaming the
        // megabyte took 16 s once; on a quiet machine it is well under a second.)
        #expect(result.elapsed < .seconds(120))
        #expect(try await server.log().count == 1)
    }

    @Test(
        "by default a request that never answers ends within 10 s, retries included, in one line",
        .requires(.pythonCryptography)
    )
    func defaultTimeoutBoundsTheRequest() async throws {
        let server = try await FakeAppStore()
        let result = try await Self.run(
            ["fetch", "groups", "--transaction-id", "slow_60000"] + Self.credentialFlags(server),
            server: server
        )
        #expect(result.status == 2)
        #expect(result.standardOutput == "")
        #expect(result.standardError == "Error: no complete answer from 127.0.0.1 within the timeout\n")
        // The library's defaults took 3 × 30 s and the waits between; the command's own default
        // ends at 10 s, after one request (counted below). The bound leaves room for starting the
        // process on a busy machine (a run under two busy loops took 68 s) and still rules out the
        // library's 90 s.
        #expect(result.elapsed < .seconds(88))
        #expect(try await server.log().count == 1)
    }

    @Test(
        "Apple's errorMessage with a newline, a CI annotation and ESC stays on the one Error: line",
        .requires(.pythonCryptography)
    )
    func injectedErrorMessage() async throws {
        let server = try await FakeAppStore()
        let result = try await Self.run(
            ["fetch", "groups", "--transaction-id", "injected"] + Self.credentialFlags(server) + Self.answerTimeout,
            server: server
        )
        #expect(result.status == 1)
        #expect(
            result.standardError
                == #"Error: the App Store answered InvalidTransactionIdError (HTTP 400, errorCode 4000006, "#
                + #"errorMessage "Invalid id.\n::error file=x.swift::forged\u001b[2J")"# + "\n"
        )
    }

    @Test("an API error answer is exit 1 with one Error: line", .requires(.pythonCryptography))
    func apiError() async throws {
        let server = try await FakeAppStore()
        let result = try await Self.run(
            ["fetch", "groups", "--transaction-id", "transactionIdNotFound"] + Self.credentialFlags(server)
                + Self.answerTimeout,
            server: server
        )
        #expect(result.status == 1)
        #expect(result.standardOutput == "")
        #expect(
            result.standardError
                == #"Error: the App Store answered TransactionIdNotFoundError (HTTP 404, errorCode 4040010, "#
                + #"errorMessage "Transaction id not found.")"# + "\n"
        )
    }

    @Test("a 401 is exit 1", .requires(.pythonCryptography))
    func unauthorized() async throws {
        let server = try await FakeAppStore()
        let result = try await Self.run(
            ["fetch", "members", "--group-id", "ok"] + Self.credentialFlags(server, key: "other-key.p8")
                + Self.answerTimeout,
            server: server,
            key: "other-key.p8"
        )
        #expect(result.status == 1)
        #expect(
            result.standardError
                == "Error: the App Store rejected the token (check the key, key id, issuer id, bundle id and clock) "
                + "(HTTP 401)\n"
        )
    }

    @Test("a rate limit beyond the maximum wait is exit 1 at once", .requires(.pythonCryptography))
    func rateLimited() async throws {
        let server = try await FakeAppStore()
        let retryAfter = Int64(Date().timeIntervalSince1970 * 1000) + 120_000
        let result = try await Self.run(
            ["fetch", "groups", "--transaction-id", "ratelimit_\(retryAfter)"] + Self.credentialFlags(server)
                + Self.answerTimeout,
            server: server
        )
        #expect(result.status == 1)
        #expect(
            result.standardError
                == #"Error: the App Store answered RateLimitExceededError (HTTP 429, errorCode 4290000, "#
                + #"errorMessage "Rate limit exceeded.", retry after \#(retryAfter) ms since 1970)"# + "\n"
        )
        #expect(try await server.log().count == 1)
    }

    @Test("invalid ids are exit 2 and never reach the server", .requires(.pythonCryptography))
    func invalidIDs() async throws {
        let server = try await FakeAppStore()
        for id in ["a/b", "..", "a%2Fb", "a?b", "a b", "", String(repeating: "7", count: 129)] {
            let groups = try await Self.run(
                ["fetch", "groups", "--transaction-id", id] + Self.credentialFlags(server),
                server: server
            )
            #expect(groups.status == 2, "\(id)")
            #expect(groups.standardError.hasPrefix("Error: the transaction id "), "\(id)")
            let members = try await Self.run(
                ["fetch", "members", "--group-id", id, "--all"] + Self.credentialFlags(server),
                server: server
            )
            #expect(members.status == 2, "\(id)")
            #expect(members.standardError.hasPrefix("Error: the group id "), "\(id)")
        }
        #expect(try await server.log().isEmpty)
    }

    @Test("bad usage is exit 2 with an Error: line, the usage and where to find help", .requires(.pythonCryptography))
    func badUsage() async throws {
        let server = try await FakeAppStore()
        let flags = Self.credentialFlags(server)
        var cases: [([String], String)] = [
            (
                ["fetch"] + flags,
                """
                Error: missing subcommand before '--key-id' (one of: groups, members)
                Usage: group-policy fetch <subcommand>
                  See 'group-policy fetch --help' for more information.

                """
            ),
            (
                ["fetch", "teams"] + flags,
                """
                Error: unknown subcommand 'teams' (one of: groups, members)
                Usage: group-policy fetch <subcommand>
                  See 'group-policy fetch --help' for more information.

                """
            ),
            (
                ["fetch", "groups"] + flags,
                """
                Error: missing required option '--transaction-id <id>'
                Usage: group-policy fetch groups --transaction-id <id> [options]
                  See 'group-policy fetch groups --help' for more information.

                """
            ),
            (
                ["fetch", "groups", "--transaction-id", "ok", "--limit", "3"] + flags,
                """
                Error: unknown option '--limit'
                Usage: group-policy fetch groups --transaction-id <id> [options]
                  See 'group-policy fetch groups --help' for more information.

                """
            ),
            (
                ["fetch", "groups", "--transaction-id", "ok", "--explain"] + flags,
                """
                Error: --entitlement and --explain need --policy
                Usage: group-policy fetch groups --transaction-id <id> [options]
                  See 'group-policy fetch groups --help' for more information.

                """
            ),
            (
                ["fetch", "members", "--group-id", "ok", "--limit", "ten"] + flags,
                """
                Error: --limit must be a number from 1 to 100
                Usage: group-policy fetch members --group-id <id> [options]
                  See 'group-policy fetch members --help' for more information.

                """
            ),
            (
                ["fetch", "members", "--group-id", "ok", "--limit", "101"] + flags,
                "Error: the limit 101 is not between 1 and 100\n"
            ),
            (
                ["fetch", "groups", "--transaction-id", "ok", "--environment", "staging"] + flags,
                """
                Error: unknown environment 'staging' (use production or sandbox)
                Usage: group-policy fetch groups --transaction-id <id> [options]
                  See 'group-policy fetch groups --help' for more information.

                """
            ),
            (
                ["fetch", "groups", "--transaction-id", "ok"],
                """
                Error: missing --key-id (or set APP_STORE_KEY_ID)
                Usage: group-policy fetch groups --transaction-id <id> [options]
                  See 'group-policy fetch groups --help' for more information.

                """
            ),
        ]
        for timeout in ["0", "-1", "0.0001", "3601", "soon", "nan", "inf", ""] {
            cases.append(
                (
                    ["fetch", "groups", "--transaction-id", "ok", "--timeout", timeout] + flags,
                    """
                    Error: --timeout must be a number of seconds from 0.001 to 3600
                    Usage: group-policy fetch groups --transaction-id <id> [options]
                      See 'group-policy fetch groups --help' for more information.

                    """
                )
            )
        }
        for (arguments, message) in cases {
            let result = try await Self.run(arguments, server: server)
            #expect(result.status == 2, "\(arguments)")
            #expect(result.standardError == message, "\(arguments)")
            #expect(result.standardOutput == "")
        }
        #expect(try await server.log().isEmpty)
    }

    @Test("an unreadable or invalid key is exit 2 without echoing the key", .requires(.pythonCryptography))
    func badKeys() async throws {
        let server = try await FakeAppStore()
        let missing = try await Self.run(
            ["fetch", "groups", "--transaction-id", "ok"] + Self.credentialFlags(server, key: "no-such-key.p8"),
            server: server
        )
        #expect(missing.status == 2)
        #expect(missing.standardError.hasPrefix("Error: cannot read "))
        for key in ["p384-key.p8", "rsa-key.p8", "encrypted-key.p8", "test-key.pub.pem"] {
            let result = try await Self.run(
                ["fetch", "groups", "--transaction-id", "ok"] + Self.credentialFlags(server, key: key),
                server: server,
                key: key
            )
            #expect(result.status == 2, "\(key)")
            #expect(result.standardError.hasPrefix("Error: \(TestFiles.fixture(key).path): invalid private key: "))
            #expect(result.standardError.filter { $0 == "\n" }.count == 1)
        }
        #expect(try await server.log().isEmpty)
    }

    @Test("no usable answer (refused connection, malformed body, redirect) is exit 2", .requires(.pythonCryptography))
    func noUsableAnswer() async throws {
        let server = try await FakeAppStore()
        let malformed = try await Self.run(
            ["fetch", "groups", "--transaction-id", "malformed"] + Self.credentialFlags(server) + Self.answerTimeout,
            server: server
        )
        #expect(malformed.status == 2)
        #expect(malformed.standardError.contains("(HTTP 200, at groups[0].groupId)"))
        let redirect = try await Self.run(
            ["fetch", "groups", "--transaction-id", "redirect"] + Self.credentialFlags(server) + Self.answerTimeout,
            server: server
        )
        #expect(redirect.status == 2)
        #expect(redirect.standardError.hasPrefix("Error: the server answered with a redirect to http://localhost:"))

        // A port held but not listening: refused, and no other test's server can take it meanwhile.
        let dead = try LoopbackSocket(refusing: ())
        defer { withExtendedLifetime(dead) {} }
        var flags = Self.credentialFlags(server)
        flags[flags.count - 1] = "http://127.0.0.1:\(dead.port)/t/refused"
        let refused = try await runProcess(
            try Self.binary(),
            ["fetch", "groups", "--transaction-id", "ok"] + flags + Self.answerTimeout,
            environment: Self.environment()
        )
        #expect(refused.status == 2)
        #expect(refused.standardError.hasPrefix("Error: the request to 127.0.0.1 failed: "))
        #expect(refused.standardError.hasSuffix("(after 3 attempts)\n"))
    }

    @Test("fetch groups --help and fetch members --help are exit 0 and list every option between them")
    func help() async throws {
        var output = ""
        for subcommand in ["groups", "members"] {
            let result = try await runProcess(
                try Self.binary(),
                ["fetch", subcommand, "--help"],
                environment: Self.environment()
            )
            #expect(result.status == 0)
            output += result.standardOutput
        }
        for option in [
            "--transaction-id", "--group-id", "--limit", "--all", "--policy", "--entitlement", "--explain", "--key-id",
            "--issuer-id", "--bundle-id", "--private-key", "--environment", "--base-url", "--timeout",
        ] {
            #expect(output.contains(option))
        }
    }
}
