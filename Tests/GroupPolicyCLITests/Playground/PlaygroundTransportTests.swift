import Foundation
import ServingTestSupport
import Testing

/// The playground's server stays answerable whatever its clients do: silent or dripping clients
/// are cut at a deadline and never queue the page's requests, more connections than it serves are
/// answered 503 at once, and every part of a request is bounded.
@Suite struct PlaygroundTransportTests {
    /// The head of a request still being sent: no blank line yet.
    static func partialHead(_ playground: PlaygroundProcess) -> [UInt8] {
        Array("GET /api/files HTTP/1.1\r\nHost: 127.0.0.1:\(playground.port)\r\nX-Slow: ".utf8)
    }

    /// Sixteen clients that connect and send nothing or half a head are all still waiting when the
    /// page's request has its answer: they hold no place the page's requests need.
    @Test func silentAndSlowClientsDoNotHoldUpThePage() async throws {
        let playground = try await PlaygroundProcess.start()
        let port = playground.port
        let head = Self.partialHead(playground)
        let connected = ContinuousClock.now
        let slow = try await offCooperativePool {
            try (0..<16).map { index in
                let connection = try RawConnection(port: port)
                if index.isMultiple(of: 2) { connection.send(head) }
                return connection
            }
        }
        let answer = try await playground.get("/api/files")
        #expect(answer.status == 200)
        // A slow client is answered only at the 10-second deadline; on a machine so busy that the
        // page's answer took that long, their 408s may have come first, which holds nothing up.
        if ContinuousClock.now - connected < .seconds(9) {
            #expect(slow.filter(\.isAnswered).count == 0)
        }
    }

    /// A client dripping its head a byte at a time is answered 408 at the deadline, however long it
    /// would go on.
    @Test func aDrippingClientIsCutAtTheDeadline() async throws {
        let playground = try await PlaygroundProcess.start()
        let port = playground.port
        let head = Self.partialHead(playground)
        let answer = try await offCooperativePool {
            let connection = try RawConnection(port: port)
            connection.send(head)
            // One more byte every 200 ms, until the server stops taking them or a minute has gone.
            let dripper = Thread {
                for _ in 0..<300 {
                    Thread.sleep(forTimeInterval: 0.2)
                    guard connection.send(Array("a".utf8)) else { return }
                }
            }
            dripper.start()
            return try connection.answer()
        }
        #expect(answer.status == 408)
        #expect(try answer.error() == "the request did not arrive whole within 10 seconds")
    }

    /// Past the connections it serves at once, a new one is answered 503 straight away; once they
    /// leave, it serves again.
    @Test func moreConnectionsThanItServesAreAnswered503() async throws {
        let playground = try await PlaygroundProcess.start()
        let port = playground.port
        let connected = ContinuousClock.now
        let (busy, held) = try await offCooperativePool {
            let held = try (0..<32).map { _ in try RawConnection(port: port) }
            let busy = try RawConnection(port: port).answer()
            return (busy, held)
        }
        // The held connections send nothing, so the server cuts them at its 10-second deadline; on
        // a machine so busy that the 33rd took that long, the places were free again by then.
        if ContinuousClock.now - connected < .seconds(9) {
            #expect(busy.status == 503)
            #expect(try busy.error() == "busy: 32 connections are being served; try again")
            #expect(held.filter(\.isAnswered).count == 0)
        }
        withExtendedLifetime(held) {}
        // Closing them frees their places as the server notices each close: ask until it answers.
        var status = 503
        for _ in 0..<600 where status == 503 {
            status = try await playground.get("/api/files").status
            if status == 503 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(status == 200)
    }

    @Test func aHeadOverTheLimitIsRefused() async throws {
        let playground = try await PlaygroundProcess.start()
        let answer = try await playground.send(
            "GET",
            "/api/files",
            headers: ["Host": "127.0.0.1:\(playground.port)", "X-Large": String(repeating: "a", count: 16 << 10)]
        )
        #expect(answer.status == 431)
        #expect(try answer.error() == "request head over the limit of 16384 bytes")
    }

    @Test(arguments: [
        ("Content-Length: +2", 400, "an invalid Content-Length"),
        ("Content-Length: 2\r\nContent-Length: 2", 400, "an invalid Content-Length"),
        ("Transfer-Encoding: chunked", 501, "Transfer-Encoding is not supported; send Content-Length"),
        ("Bad Header: x", 400, "whitespace in a header name"),
    ])
    func aMalformedHeadIsRefused(header: String, status: Int, message: String) async throws {
        let playground = try await PlaygroundProcess.start()
        let bytes = Array(
            ("POST /api/check HTTP/1.1\r\nHost: 127.0.0.1:\(playground.port)\r\nOrigin: \(playground.origin)\r\n"
                + "Content-Type: application/json\r\n\(header)\r\n\r\n{}").utf8
        )
        let port = playground.port
        let answer = try await offCooperativePool { try RawHTTP.exchange(port: port, bytes) }
        #expect(answer.status == status)
        #expect(try answer.error() == message)
    }

    @Test func aRequestLineThatIsNotHTTPIsRefused() async throws {
        let playground = try await PlaygroundProcess.start()
        let port = playground.port
        let answer = try await offCooperativePool { try RawHTTP.exchange(port: port, Array("HELLO\r\n\r\n".utf8)) }
        #expect(answer.status == 400)
        #expect(try answer.error() == "not an HTTP/1.1 request line")
    }
}
