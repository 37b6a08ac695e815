import Foundation
import Testing

/// What the playground refuses: requests that do not name its loopback address, state-changing
/// requests from another origin, bodies that are not JSON or too large; and the headers every
/// answer carries.
@Suite struct PlaygroundSecurityTests {
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    @Test func everyAnswerCarriesTheContentSecurityPolicyAndNosniff() throws {
        let playground = try PlaygroundProcess()
        let answers = [
            try playground.get("/"), try playground.get("/playground.js"), try playground.get("/playground.css"),
            try playground.get("/favicon.svg"), try playground.get("/api/files"), try playground.get("/missing"),
            try playground.post("/api/check", [:]), try playground.post("/api/check", [:], origin: "http://evil.example"),
            try RawHTTP.send(port: playground.port, method: "GET", path: "/", headers: ["Host": "evil.example"]),
        ]
        for answer in answers {
            #expect(answer.headers["content-security-policy"] == Self.contentSecurityPolicy)
            #expect(answer.headers["x-content-type-options"] == "nosniff")
        }
        #expect(answers.map(\.status) == [200, 200, 200, 200, 200, 404, 200, 403, 421])
    }

    @Test(arguments: ["evil.example", "evil.example:PORT", "127.0.0.1", "127.0.0.1:1", "localhost.evil.example:PORT"])
    func aForeignHostIsRefused(host: String) throws {
        let playground = try PlaygroundProcess()
        let value = host.replacingOccurrences(of: "PORT", with: String(playground.port))
        let answer = try RawHTTP.send(port: playground.port, method: "GET", path: "/api/files", headers: ["Host": value])
        #expect(answer.status == 421)
        #expect(
            try answer.json()["error"] as? String
                == "refused: Host '\(value)' is not this playground's loopback address (127.0.0.1:\(playground.port))"
        )
    }

    @Test(arguments: ["localhost", "127.0.0.1", "[::1]", "LOCALHOST"])
    func theLoopbackNamesWithThePortAreAccepted(host: String) throws {
        let playground = try PlaygroundProcess()
        let answer = try RawHTTP.send(
            port: playground.port,
            method: "GET",
            path: "/api/files",
            headers: ["Host": "\(host):\(playground.port)"]
        )
        #expect(answer.status == 200)
    }

    @Test func aRequestWithoutHostIsRefused() throws {
        let playground = try PlaygroundProcess()
        let answer = try RawHTTP.send(port: playground.port, method: "GET", path: "/", headers: [:])
        #expect(answer.status == 400)
        #expect(try answer.json()["error"] as? String == "a request needs one Host header")
    }

    @Test(arguments: ["http://evil.example", "http://127.0.0.1:1", "https://127.0.0.1:PORT", "null"])
    func aPostFromAnotherOriginIsRefusedAndWritesNothing(origin: String) throws {
        let playground = try PlaygroundProcess()
        let value = origin.replacingOccurrences(of: "PORT", with: String(playground.port))
        let before = try playground.policyText("team-workspace.json")
        let edit = PlaygroundAnswerTests.plusAdminsExport
        let answer = try playground.post(
            "/api/save",
            ["file": edit.file, "files": try edit.files(in: playground)],
            origin: value
        )
        #expect(answer.status == 403)
        #expect(
            try answer.json()["error"] as? String
                == "refused: Origin '\(value)' is not this playground's (http://127.0.0.1:\(playground.port))"
        )
        #expect(try playground.policyText("team-workspace.json") == before)
    }

    @Test func aPostWithoutOriginIsRefused() throws {
        let playground = try PlaygroundProcess()
        let answer = try RawHTTP.send(
            port: playground.port,
            method: "POST",
            path: "/api/check",
            headers: ["Host": "127.0.0.1:\(playground.port)", "Content-Type": "application/json"],
            body: Array("{}".utf8)
        )
        #expect(answer.status == 403)
        #expect(
            try answer.json()["error"] as? String
                == "refused: a POST needs the Origin of this playground (http://127.0.0.1:\(playground.port))"
        )
    }

    @Test func aPostFromLocalhostIsAccepted() throws {
        let playground = try PlaygroundProcess()
        let answer = try playground.post("/api/check", [:], origin: "http://localhost:\(playground.port)")
        #expect(answer.status == 200)
    }

    @Test func aPostThatIsNotJSONIsRefused() throws {
        let playground = try PlaygroundProcess()
        let answer = try RawHTTP.send(
            port: playground.port,
            method: "POST",
            path: "/api/check",
            headers: ["Host": "127.0.0.1:\(playground.port)", "Origin": playground.origin, "Content-Type": "text/plain"],
            body: Array("{}".utf8)
        )
        #expect(answer.status == 415)
    }

    @Test func aBodyOverTheLimitIsRefusedBeforeItIsRead() throws {
        let playground = try PlaygroundProcess()
        let limit = (32 << 20) + (1 << 20) + (1 << 20)
        let answer = try RawHTTP.send(
            port: playground.port,
            method: "POST",
            path: "/api/check",
            headers: ["Host": "127.0.0.1:\(playground.port)", "Origin": playground.origin, "Content-Type": "application/json"],
            declaredLength: limit + 1
        )
        #expect(answer.status == 413)
        #expect(
            try answer.json()["error"] as? String
                == "request body of \(limit + 1) bytes is over the limit of \(limit) bytes"
        )
    }

    @Test func aResponseOverTheLimitGetsTheCLIsLine() throws {
        let playground = try PlaygroundProcess()
        // A valid response padded past 1 MiB with spaces.
        let response = "{\"groups\": []" + String(repeating: " ", count: 1 << 20) + "}"
        let path = playground.root + "/big-response.json"
        try response.write(toFile: path, atomically: true, encoding: .utf8)
        let answer = try playground.post("/api/decision", ["response": response, "responseName": "big-response.json"])
        #expect(answer.status == 200)
        let message = try #require(try answer.json()["error"] as? String)
        // The CLI decodes the same bytes with the same limits: `eval` reads a file of that size
        // and refuses it at the reader, `decodeResponse` at the decoder; both are bounded by 1 MiB.
        #expect(message.hasPrefix("invalid response: big-response.json"))
        #expect(message.contains("\(1 << 20)"))
    }

    @Test func anUnknownEnvironmentGetsTheCLIsLine() throws {
        let playground = try PlaygroundProcess()
        let answer = try playground.post("/api/decision", try playground.customer("seat-holder.json", environment: "staging"))
        #expect(try answer.json()["error"] as? String == "unknown environment 'staging' (use production or sandbox)")
    }

    @Test func aWrongMethodOrPathIsRefused() throws {
        let playground = try PlaygroundProcess()
        #expect(try playground.get("/api/check").status == 405)
        #expect(try playground.post("/api/files", [:]).status == 405)
        #expect(try playground.get("/etc/passwd").status == 404)
    }
}
