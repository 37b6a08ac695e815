import Foundation
import ServingTestSupport
import Testing

/// What the playground refuses: requests that do not name its loopback address, requests from
/// another origin or site, bodies that are not JSON of its keys or too large; and the headers
/// every answer carries.
@Suite struct PlaygroundSecurityTests {
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    @Test func everyAnswerCarriesTheContentSecurityPolicyAndNosniff() async throws {
        let playground = try await PlaygroundProcess.start()
        let answers = [
            try await playground.get("/"), try await playground.get("/js/main.js"),
            try await playground.get("/playground.css"), try await playground.get("/favicon.svg"),
            try await playground.get("/api/files"), try await playground.get("/missing"),
            try await playground.post("/api/check", [:]),
            try await playground.post("/api/check", [:], origin: "http://evil.example"),
            try await playground.send("GET", "/", headers: ["Host": "evil.example"]),
            try await playground.send(
                "GET",
                "/",
                headers: ["Host": "127.0.0.1:\(playground.port)"],
                declaredLength: -1
            ),
        ]
        for answer in answers {
            #expect(answer.headers["content-security-policy"] == Self.contentSecurityPolicy)
            #expect(answer.headers["x-content-type-options"] == "nosniff")
            #expect(answer.headers["x-frame-options"] == "DENY")
        }
        #expect(answers.map(\.status) == [200, 200, 200, 200, 200, 404, 200, 403, 421, 400])
    }

    @Test(arguments: ["evil.example", "evil.example:PORT", "127.0.0.1", "127.0.0.1:1", "localhost.evil.example:PORT"])
    func aForeignHostIsRefused(host: String) async throws {
        let playground = try await PlaygroundProcess.start()
        let value = host.replacingOccurrences(of: "PORT", with: String(playground.port))
        let answer = try await playground.send("GET", "/api/files", headers: ["Host": value])
        #expect(answer.status == 421)
        #expect(
            try answer.error()
                == "refused: Host '\(value)' is not this playground's loopback address (127.0.0.1:\(playground.port))"
        )
    }

    @Test(arguments: ["localhost", "127.0.0.1", "[::1]", "LOCALHOST"])
    func theLoopbackNamesWithThePortAreAccepted(host: String) async throws {
        let playground = try await PlaygroundProcess.start()
        let answer = try await playground.send("GET", "/api/files", headers: ["Host": "\(host):\(playground.port)"])
        #expect(answer.status == 200)
    }

    @Test func aRequestWithoutHostOrWithTwoIsRefused() async throws {
        let playground = try await PlaygroundProcess.start()
        let missing = try await playground.send("GET", "/", headers: [:])
        #expect(missing.status == 400)
        #expect(try missing.error() == "a request needs one Host header")
        // Two Host headers, the second a foreign one: neither is taken.
        let bytes = Array("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(playground.port)\r\nHost: evil.example\r\n\r\n".utf8)
        let twice = try RawHTTP.exchange(port: playground.port, bytes)
        #expect(twice.status == 400)
    }

    @Test(arguments: ["http://evil.example", "http://127.0.0.1:1", "https://127.0.0.1:PORT", "null"])
    func aPostFromAnotherOriginIsRefusedAndWritesNothing(origin: String) async throws {
        let playground = try await PlaygroundProcess.start()
        let value = origin.replacingOccurrences(of: "PORT", with: String(playground.port))
        let before = try playground.policyText("team-workspace.json")
        let edit = PlaygroundAnswerTests.plusAdminsExport
        let answer = try await playground.post(
            "/api/save",
            ["file": edit.file, "files": try edit.files(in: playground)],
            origin: value
        )
        #expect(answer.status == 403)
        let message = "refused: Origin '\(value)' is not this playground's (http://127.0.0.1:\(playground.port))"
        #expect(try answer.error() == message)
        #expect(try playground.policyText("team-workspace.json") == before)
        // The refusal is on standard error too, for the author to see.
        #expect(playground.standardErrorLines == ["playground: POST /api/save: \(message)"])
    }

    /// A `GET` from another origin (a script of another site reading the policies) is refused too.
    @Test func aGetFromAnotherOriginIsRefused() async throws {
        let playground = try await PlaygroundProcess.start()
        let answer = try await playground.send(
            "GET",
            "/api/files",
            headers: ["Host": "127.0.0.1:\(playground.port)", "Origin": "http://evil.example"]
        )
        #expect(answer.status == 403)
        #expect(
            try answer.error()
                == "refused: Origin 'http://evil.example' is not this playground's (http://127.0.0.1:\(playground.port))"
        )
    }

    /// What a browser marks as coming from another site (another port of 127.0.0.1 is the same
    /// site, not the same origin) is refused, with or without an Origin.
    @Test(arguments: ["cross-site", "same-site"])
    func aRequestFromAnotherSiteIsRefused(site: String) async throws {
        let playground = try await PlaygroundProcess.start()
        let answer = try await playground.send(
            "GET",
            "/api/files",
            headers: ["Host": "127.0.0.1:\(playground.port)", "Sec-Fetch-Site": site]
        )
        #expect(answer.status == 403)
        #expect(try answer.error() == "refused: a request from another site (Sec-Fetch-Site: \(site))")
        let own = try await playground.send(
            "GET",
            "/api/files",
            headers: ["Host": "127.0.0.1:\(playground.port)", "Sec-Fetch-Site": "same-origin"]
        )
        #expect(own.status == 200)
    }

    @Test func aPostWithoutOriginIsRefused() async throws {
        let playground = try await PlaygroundProcess.start()
        let answer = try await playground.send(
            "POST",
            "/api/check",
            headers: ["Host": "127.0.0.1:\(playground.port)", "Content-Type": "application/json"],
            body: Array("{}".utf8)
        )
        #expect(answer.status == 403)
        #expect(
            try answer.error()
                == "refused: a POST needs the Origin of this playground (http://127.0.0.1:\(playground.port))"
        )
    }

    @Test func aPostFromLocalhostIsAccepted() async throws {
        let playground = try await PlaygroundProcess.start()
        let answer = try await playground.post("/api/check", [:], origin: "http://localhost:\(playground.port)")
        #expect(answer.status == 200)
    }

    @Test func aPostThatIsNotJSONIsRefused() async throws {
        let playground = try await PlaygroundProcess.start()
        let answer = try await playground.send(
            "POST",
            "/api/check",
            headers: [
                "Host": "127.0.0.1:\(playground.port)", "Origin": playground.origin, "Content-Type": "text/plain",
            ],
            body: Array("{}".utf8)
        )
        #expect(answer.status == 415)
        #expect(try answer.error() == "a POST body must be JSON (Content-Type: application/json)")
    }

    @Test(arguments: [
        (
            #"{"files": {}, "polcy": "x"}"#,
            "the request body has an unknown key 'polcy' (known: files, response, "
                + "responseName, environment, entitlements, capability, group, file, versions, baseline, page)"
        ),
        (#"{"files": ["a"]}"#, "the request body's 'files' has the wrong type"),
        (#"[1]"#, "the request body is not a JSON object"),
        (#"{"files": "#, "the request body is not a JSON object of the playground's keys"),
    ])
    func aBodyThatIsNotOneOfThePlaygroundsIsRefused(body: String, message: String) async throws {
        let playground = try await PlaygroundProcess.start()
        let answer = try await playground.send(
            "POST",
            "/api/check",
            headers: [
                "Host": "127.0.0.1:\(playground.port)", "Origin": playground.origin, "Content-Type": "application/json",
            ],
            body: Array(body.utf8)
        )
        #expect(answer.status == 400)
        #expect(try answer.error() == message)
    }

    @Test func aBodyOverTheLimitIsRefusedBeforeItIsRead() async throws {
        let playground = try await PlaygroundProcess.start()
        let limit = (32 << 20) + (1 << 20) + (1 << 20)
        let answer = try await playground.send(
            "POST",
            "/api/check",
            headers: [
                "Host": "127.0.0.1:\(playground.port)", "Origin": playground.origin, "Content-Type": "application/json",
            ],
            declaredLength: limit + 1
        )
        #expect(answer.status == 413)
        #expect(try answer.error() == "request body of \(limit + 1) bytes is over the limit of \(limit) bytes")
    }

    @Test func aWrongMethodOrPathIsRefused() async throws {
        let playground = try await PlaygroundProcess.start()
        #expect(try await playground.get("/api/check").status == 405)
        #expect(try await playground.post("/api/files", [:]).status == 405)
        #expect(try await playground.get("/etc/passwd").status == 404)
        #expect(try await playground.get("/../Policies/team-workspace.json").status == 404)
    }
}
