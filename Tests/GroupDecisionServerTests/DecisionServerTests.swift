import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy
import GroupPolicyTestSupport
import ServingTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// group-decision-server, run as the built binary on 127.0.0.1 against the fake App Store, and
/// asked over real HTTP.
@Suite("Decision server: routes and answers")
struct DecisionServerTests {
    static let policies = TestFiles.packageRoot.appending(path: "Policies").path

    @Test(
        "/decision answers exactly Policy.evaluate's JSON for the fake's response, and caches Apple's answer",
        .requires(.pythonCryptography)
    )
    func decisionMatchesTheEngine() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
        let policy = try Policy(contentsOf: Self.policies)
        // The fake's answer, fetched in a namespace of its own so the server's log stays its own.
        let response = try await FakeAppStore().client().customerGroups(anyTransactionID: "ok1")
        let sandbox = EvaluationContext(environment: .sandbox, entitlements: ["com.example.teams.pro"])

        let first = try await server.get(
            "/decision?transactionId=ok1&environment=sandbox&entitlement=com.example.teams.pro"
        )
        #expect(first.status == 200)
        #expect(first.contentType == "application/json; charset=utf-8")
        #expect(first.decisionText == policy.evaluate(response, in: sandbox).jsonString(pretty: false))
        #expect(first.groupsSource == "live")
        #expect(
            first.text.contains(#""workspaces":[{"workspace":"team","groupId":"900000000000000000","role":"admin"}]"#)
        )

        let explained = try await server.get(
            "/decision?transactionId=ok1&entitlement=com.example.teams.pro&explain=true"
        )
        #expect(explained.status == 200)
        #expect(
            explained.decisionText
                == policy.evaluate(response, in: sandbox).jsonString(includingProvenance: true, pretty: false)
        )
        #expect(explained.groupsSource == "cache")

        let production = try await server.get("/decision?transactionId=ok1&environment=production")
        #expect(production.status == 200)
        #expect(
            production.decisionText == policy.evaluate(response, in: EvaluationContext()).jsonString(pretty: false)
        )
        #expect(production.groupsSource == "live")
        #expect(production.text.contains(#""capabilities":[],"#))

        // One fetch per environment: the second and third sandbox answers came from the cache.
        let fetches = try await store.log().map(\.path)
        #expect(fetches == ["/groups/v1/currentGroups/ok1", "/groups/v1/currentGroups/ok1"])
    }

    @Test(
        "/decision with whyNot answers the Decision and Policy.explain's JSON beside it",
        .requires(.pythonCryptography)
    )
    func decisionWithWhyNot() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
        let policy = try Policy(contentsOf: Self.policies)
        let response = try await FakeAppStore().client().customerGroups(anyTransactionID: "ok1")
        let sandbox = EvaluationContext(environment: .sandbox)

        let answer = try await server.get("/decision?transactionId=ok1&whyNot=team.templates&explain=true")
        #expect(answer.status == 200)
        let explanation = try policy.explain("team.templates", for: response, in: sandbox)
        // The served Decision is Policy.evaluate's, followed by its freshness keys.
        let evaluated = policy.evaluate(response, in: sandbox).jsonString(includingProvenance: true, pretty: false)
        #expect(answer.text.hasPrefix(#"{"decision":"# + evaluated.dropLast() + #","groupsSource":"live","#))
        #expect(answer.text.hasSuffix(#"},"explanation":"# + explanation.jsonString(pretty: false) + "}"))
        // Without the Pro entitlement, templates are a near miss of the rule that requires it.
        #expect(answer.text.contains(#"{"condition":"entitlements","missing":["com.example.teams.pro"]}"#))

        let misspelt = try await server.get("/decision?transactionId=ok1&whyNot=team.template")
        #expect(misspelt.status == 400)
        #expect(
            misspelt.text
                == #"{"error":{"code":"undeclared-capability","message":"undeclared capability 'team.template' (did you mean 'team.templates'?)"}}"#
        )
        let empty = try await server.get("/decision?transactionId=ok1&whyNot=")
        #expect(empty.status == 400)
        #expect(empty.text == #"{"error":{"code":"bad-request","message":"missing parameter 'whyNot'"}}"#)
    }

    @Test("an empty whyNot is refused before anything goes upstream", .requires(.pythonCryptography))
    func emptyWhyNotFetchesNothing() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
        let empty = try await server.get("/decision?transactionId=ok1&whyNot=")
        #expect(empty.status == 400)
        #expect(empty.text == #"{"error":{"code":"bad-request","message":"missing parameter 'whyNot'"}}"#)
        #expect(try await store.log().isEmpty)
    }

    @Test(
        "/workspace/members lists every page, fetched again on every call, only for a member of the group's workspace",
        .requires(.pythonCryptography)
    )
    func workspaceMembers() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
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

        #expect(
            try await store.log().map(\.path) == [
                "/groups/v1/currentGroups/ingroup_paged_team",
                "/groups/v1/group/paged_team?limit=100",
                "/groups/v1/group/paged_team?limit=100&paginationToken=page2-token",
                "/groups/v1/group/paged_team?limit=100&paginationToken=page3%2Ftoken%2B%3D%26x",
                "/groups/v1/group/paged_team?limit=100",
                "/groups/v1/group/paged_team?limit=100&paginationToken=page2-token",
                "/groups/v1/group/paged_team?limit=100&paginationToken=page3%2Ftoken%2B%3D%26x",
            ]
        )
    }

    @Test("a failed fetch grants nothing, says why, and is not cached", .requires(.pythonCryptography))
    func failuresFailClosed() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
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

        let refused = try await server.get("/decision?transactionId=not%20an%20id")
        #expect(refused.status == 400)
        #expect(refused.text.hasPrefix(#"{"error":{"code":"invalid-argument","#))

        #expect(
            try await store.log().map(\.path) == [
                "/groups/v1/currentGroups/unauthorized", "/groups/v1/currentGroups/unauthorized",
                "/groups/v1/currentGroups/transactionIdNotFound",
            ]
        )
    }

    @Test("an answer is reused for the cache TTL, then fetched again", .requires(.pythonCryptography))
    func cacheEntriesExpire() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store, arguments: ["--cache-ttl", "1"])
        #expect(try await server.get("/decision?transactionId=ok2").status == 200)
        try await Task.sleep(for: .milliseconds(1100))
        #expect(try await server.get("/decision?transactionId=ok2").status == 200)
        #expect(try await store.log().count == 2)
    }

    @Test(
        "requests the server does not serve are refused with a JSON error",
        .requires(.pythonCryptography),
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
                "/workspace/members?transactionId=ok", 400,
                #"{"error":{"code":"bad-request","message":"missing parameter 'groupId'"}}"#
            ),
            (
                "/decisions", 404,
                #"{"error":{"code":"not-found","message":"no such path (try /decision, /workspace/members, /invalidate, /shadow or /shadow/reset)"}}"#
            ),
        ]
    )
    func badRequests(path: String, status: Int, body: String) async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
        let answer = try await server.get(path)
        #expect(answer.status == status)
        #expect(answer.text == body)
        #expect(try await store.log().isEmpty)
    }

    @Test("HTTP limits: only GET, no bodies, a bounded head, a bounded wait for it", .requires(.pythonCryptography))
    func httpLimits() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store, arguments: ["--read-timeout", "1"])

        let post = try await server.exchange("POST /decision?transactionId=ok HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(post.hasPrefix("HTTP/1.1 405 Method Not Allowed\r\n"))
        #expect(post.contains("\r\nAllow: GET\r\n"))

        let body = try await server.exchange(
            "GET /decision?transactionId=ok HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
        )
        #expect(body.hasPrefix("HTTP/1.1 413 Content Too Large\r\n"))

        let huge = try await server.exchange(
            "GET /decision HTTP/1.1\r\nX-Filler: \(String(repeating: "a", count: 9000))\r\n\r\n"
        )
        #expect(huge.hasPrefix("HTTP/1.1 431 Request Header Fields Too Large\r\n"))

        let notHTTP = try await server.exchange("hello\r\n\r\n")
        #expect(notHTTP.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))

        // A client that never finishes its head is answered 408 once the read timeout passes.
        let started = ContinuousClock.now
        let slow = try await server.exchange("GET /decision?transactionId=ok HTTP/1.1\r\nHost: x\r\n")
        #expect(slow.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        #expect(ContinuousClock.now - started >= .milliseconds(900))
        #expect(slow.hasSuffix(#"{"error":{"code":"request-timeout","message":"the request did not arrive in time"}}"#))

        #expect(try await store.log().isEmpty)
    }
}

/// A running group-decision-server, stopped when released.
final class DecisionServerProcess: @unchecked Sendable {
    let port: Int
    private let process: Process
    /// The server's standard output, after the line saying where it listens.
    private let output: FileHandle
    /// Bytes read from `output` that no call to ``outputLines(_:within:)`` has returned yet; only
    /// touched by one such call at a time.
    private var unreadOutput: [UInt8]

    /// The built binary next to the test runner, or in the package's default build folder.
    static func binary() throws -> URL {
        var candidates: [URL] = []
        if let runner = Bundle.main.executableURL {
            candidates.append(runner.deletingLastPathComponent().appending(path: "group-decision-server"))
        }
        candidates.append(TestFiles.packageRoot.appending(path: ".build/debug/group-decision-server"))
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(
            found,
            "build group-decision-server first (swift build); looked in \(candidates.map(\.path))"
        )
    }

    /// Starts a server on an ephemeral port of 127.0.0.1, serving Policies/ and fetching from the
    /// fake App Store.
    static func start(
        appStore: FakeAppStore,
        policies: String = DecisionServerTests.policies,
        arguments: [String] = [],
        environment: [String: String] = [:]
    ) async throws -> DecisionServerProcess {
        let binary = try binary()
        return try await offCooperativePool {
            try DecisionServerProcess(
                binary: binary,
                appStore: appStore,
                policies: policies,
                arguments: arguments,
                environment: environment
            )
        }
    }

    /// Where the server's standard error (its log) goes.
    let logFile = URL(filePath: NSTemporaryDirectory()).appending(path: "decision-server-\(UUID().uuidString).log")

    private init(
        binary: URL,
        appStore: FakeAppStore,
        policies: String,
        arguments: [String],
        environment: [String: String]
    ) throws {
        let process = Process()
        process.executableURL = binary
        process.arguments =
            [
                "--port", "0", "--policies", policies,
                "--base-url", appStore.baseURL.absoluteString,
            ] + arguments
        process.environment = [
            "APP_STORE_KEY_ID": FakeAppStore.keyID,
            "APP_STORE_ISSUER_ID": FakeAppStore.issuerID,
            "APP_STORE_BUNDLE_ID": FakeAppStore.bundleID,
            "APP_STORE_PRIVATE_KEY_PATH": TestFiles.fixture("test-key.p8").path,
        ].merging(environment) { _, new in new }
        let output = Pipe()
        process.standardOutput = output
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: logFile)
        process.standardInput = FileHandle.nullDevice
        try process.run()
        var line: [UInt8] = []
        while !line.contains(UInt8(ascii: "\n")) {
            let data = try output.fileHandleForReading.readAvailableBytes()
            if data.isEmpty { break }
            line += data
        }
        let firstLine = line.firstIndex(of: UInt8(ascii: "\n")).map { line[..<$0] } ?? line[...]
        let text = String(decoding: firstLine, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let prefix = "group-decision-server listening on http://127.0.0.1:"
        guard text.hasPrefix(prefix), let port = Int(text.dropFirst(prefix.count)) else {
            process.terminate()
            throw FakeAppStoreError(message: "group-decision-server did not start (printed '\(text)')")
        }
        self.port = port
        self.process = process
        self.output = output.fileHandleForReading
        self.unreadOutput = Array(line[min(line.count, firstLine.count + 1)...])
    }

    /// The next `count` lines the server writes on standard output (its decision log with
    /// `--decision-log -`); fails when they have not all come within `limit`.
    func outputLines(_ count: Int, within limit: Duration = .seconds(10)) async throws -> [String] {
        try await offCooperativePool { [self] in
            let deadline = ContinuousClock.now + limit
            while unreadOutput.count(where: { $0 == UInt8(ascii: "\n") }) < count {
                let left = deadline - ContinuousClock.now
                guard left > .zero else {
                    throw FakeAppStoreError(
                        message: "the server wrote \(unreadOutput.count) bytes, not \(count) lines, within \(limit)"
                    )
                }
                var poller = pollfd(fd: output.fileDescriptor, events: Int16(POLLIN), revents: 0)
                let milliseconds = Int32(min(left.components.seconds * 1000 + 1, 10_000))
                guard poll(&poller, 1, milliseconds) > 0 else { continue }
                var buffer = [UInt8](repeating: 0, count: 4096)
                let received = buffer.withUnsafeMutableBytes { read(output.fileDescriptor, $0.baseAddress, 4096) }
                guard received > 0 else { throw FakeAppStoreError(message: "the server closed its standard output") }
                unreadOutput += buffer[..<received]
            }
            var lines: [String] = []
            while lines.count < count, let end = unreadOutput.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: unreadOutput[..<end], as: UTF8.self))
                unreadOutput.removeSubrange(...end)
            }
            return lines
        }
    }

    /// Stops the server: SIGTERM, and SIGKILL if it is still running two seconds later.
    deinit {
        process.terminate()
        for _ in 0..<200 where process.isRunning { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: logFile)
    }

    /// Sends the server a signal (SIGTERM to stop it).
    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// The server's exit status once it has exited, or `nil` when it still runs after `limit`.
    func exitStatus(within limit: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now + limit
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        return process.isRunning ? nil : process.terminationStatus
    }

    /// The lines the server has logged so far.
    func logLines() -> [String] {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    struct Answer {
        var status: Int
        var contentType: String?
        var text: String
        var retryAfter: String? = nil

        /// The Decision's JSON without the freshness keys the server appends.
        var decisionText: String {
            guard let range = text.range(of: #","groupsSource":""#, options: .backwards) else { return text }
            return text[..<range.lowerBound] + "}"
        }

        /// The `groupsSource` the server appended: `live`, `cache` or `stale`.
        var groupsSource: String? { field("groupsSource") }

        /// The `groupsFetchedAt` the server appended.
        var groupsFetchedAt: String? { field("groupsFetchedAt") }

        /// The `decisionId` the server appended.
        var decisionID: String? { field("decisionId") }

        private func field(_ name: String) -> String? {
            guard let start = text.range(of: "\"\(name)\":\"", options: .backwards),
                let end = text[start.upperBound...].firstIndex(of: "\"")
            else { return nil }
            return String(text[start.upperBound..<end])
        }
    }

    /// `POST path` over HTTP, without a body.
    func post(_ path: String) async throws -> Answer {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)\(path)"))
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return Answer(
            status: http.statusCode,
            contentType: http.value(forHTTPHeaderField: "Content-Type"),
            text: String(decoding: data, as: UTF8.self)
        )
    }

    /// `GET path` over HTTP.
    func get(_ path: String) async throws -> Answer {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)\(path)"))
        let (data, response) = try await URLSession.shared.data(from: url)
        let http = try #require(response as? HTTPURLResponse)
        return Answer(
            status: http.statusCode,
            contentType: http.value(forHTTPHeaderField: "Content-Type"),
            text: String(decoding: data, as: UTF8.self),
            retryAfter: http.value(forHTTPHeaderField: "Retry-After")
        )
    }

    /// Where the first whole answer in `bytes` ends (its head, then `Content-Length` bytes of
    /// body), or `nil` before it has all come.
    static func answerEnd(_ bytes: [UInt8]) -> Int? {
        guard let blank = bytes.indices.first(where: { bytes[$0...].starts(with: [13, 10, 13, 10]) }) else {
            return nil
        }
        let head = String(decoding: bytes[..<blank], as: UTF8.self).lowercased()
        guard let field = head.range(of: "\r\ncontent-length: ") else { return nil }
        let digits = head[field.upperBound...].prefix { $0.isNumber }
        guard let length = Int(digits), bytes.count >= blank + 4 + length else { return nil }
        return blank + 4 + length
    }

    /// Sends raw bytes on a new connection and returns the server's answer: up to the end of its
    /// body (the connection may stay open for another request), or what came before it closed.
    func exchange(_ request: String) async throws -> String {
        let port = port
        return try await offCooperativePool {
            #if canImport(Glibc)
            let connection = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
            let connection = socket(AF_INET, SOCK_STREAM, 0)
            #endif
            guard connection >= 0 else { throw FakeAppStoreError(message: "socket failed") }
            defer { close(connection) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(connection, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else { throw FakeAppStoreError(message: "connect failed") }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let bytes = Array(request.utf8)
            _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break }
                received += chunk[..<count]
                if let end = Self.answerEnd(received) { return String(decoding: received[..<end], as: UTF8.self) }
            }
            return String(decoding: received, as: UTF8.self)
        }
    }
}
