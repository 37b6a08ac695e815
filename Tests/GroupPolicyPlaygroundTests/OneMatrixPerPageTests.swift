import Foundation
import ServingTestSupport
import Testing

@testable import GroupPolicyPlayground

/// The server computes at most one scenario matrix per page at once, and at most two answers of
/// any kind: what it cannot take is refused with one line naming the limit, never queued past it.
@Suite struct OneMatrixPerPageTests {
    @Test func aSecondMatrixFromAPageWhoseFirstIsComputingIsRefusedAtOnce() async throws {
        let running = try RunningPlayground()
        // The page's first matrix is being computed.
        #expect(running.app.matrixFlights.begin("page-a"))
        let refused = try await running.post("/api/matrix", ["page": "page-a"])
        #expect(refused.status == 429)
        #expect(
            try refused.error()
                == "busy: this page's previous matrix is still being computed (one at a time per page)"
        )
        // Another page's is answered.
        let other = try await running.post("/api/matrix", ["page": "page-b"])
        #expect(other.status == 200)
        #expect(try other.json()["verdict"] as? String == "equivalent")
        // Once the first is done, the page asks again and is answered.
        running.app.matrixFlights.end("page-a")
        #expect(try await running.post("/api/matrix", ["page": "page-a"]).status == 200)
        // The refused request did not end the first one's flight.
        #expect(running.app.matrixFlights.begin("page-b"))
    }

    @Test func aPageIDOverItsLimitIsRefused() async throws {
        let running = try RunningPlayground()
        let answer = try await running.post("/api/matrix", ["page": String(repeating: "a", count: 65)])
        #expect(answer.status == 400)
        #expect(try answer.error() == "the request's 'page' is over the limit of 64 bytes")
    }

    @Test func anAnswerThatCannotGetAPlaceWithinItsWaitIsRefusedNamingTheLimit() async throws {
        let running = try RunningPlayground { $0.computationWait = .milliseconds(200) }
        // Two answers are being computed.
        #expect(running.app.gate.enter())
        #expect(running.app.gate.enter())
        let refused = try await running.post("/api/check", [:])
        #expect(refused.status == 503)
        #expect(
            try refused.error()
                == "busy: the playground computes at most 2 answers at once, and none finished within 0.2 seconds; "
                + "try again"
        )
        running.app.gate.leave()
        #expect(try await running.post("/api/check", [:]).status == 200)
        running.app.gate.leave()
    }

    @Test func theFilesAPageLoadsTakeAPlaceAsAnAnswerDoes() async throws {
        let running = try RunningPlayground { $0.computationWait = .milliseconds(200) }
        let port = running.port
        let load = RawHTTP.request(method: "GET", path: "/api/files", headers: ["Host": "127.0.0.1:\(port)"], body: [])
        #expect(running.app.gate.enter())
        #expect(running.app.gate.enter())
        let refused = try await offCooperativePool { try RawHTTP.exchange(port: port, load) }
        #expect(refused.status == 503)
        #expect(
            try refused.error()
                == "busy: the playground computes at most 2 answers at once, and none finished within 0.2 seconds; "
                + "try again"
        )
        running.app.gate.leave()
        #expect(try await offCooperativePool { try RawHTTP.exchange(port: port, load) }.status == 200)
        running.app.gate.leave()
    }
}
