import Foundation
import HTTPServing
import ServingTestSupport
import Synchronization
import Testing

/// The HTTP layer on its own: keep-alive, pipelining, answers at once or from a task, refusals in
/// the application's words, timeouts, the `poll(2)` branch, and a graceful stop.
///
/// Heavy, so never beside the fleet simulation's seeds: those kept both cooperative threads busy,
/// and a test's request then came later than any read timeout.
@Suite(.heavy) struct HTTPServerTests {
    /// A server answering `GET /echo?x` with the query and the loop it came through, running on a
    /// thread of its own until the test ends.
    final class Running: Sendable {
        let server: HTTPServer
        private let returned = Returned()

        /// Whether `run` has returned.
        final class Returned: Sendable {
            let value = Mutex(false)
        }

        var stopped: Bool { returned.value.withLock { $0 } }

        #if os(Linux)
        /// The CPU clock of the thread that runs loop 0, once it runs.
        final class LoopClock: Sendable {
            let value = Mutex<clockid_t?>(nil)
        }

        private let loopClock = LoopClock()

        /// The CPU time loop 0's thread has used so far (`nil` before it runs).
        var loopCPUTime: Duration? {
            guard let clock = loopClock.value.withLock({ $0 }) else { return nil }
            var time = timespec()
            guard clock_gettime(clock, &time) == 0 else { return nil }
            return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
        }
        #endif

        /// A server configured by `configure`, whose `GET /slow` takes `slow`, then waits for `held`
        /// to open when one is given.
        init(
            _ configure: (inout HTTPServer.Configuration) -> Void = { _ in },
            slow: Duration = .zero,
            held: Gate? = nil
        ) throws {
            var configuration = HTTPServer.Configuration()
            // A test's request may wait for its task's turn on a busy machine (in one CI run a
            // request came more than 60 s after its connection, and was rightly answered 408):
            // only the tests of the read timeout set one they can meet.
            configuration.limits.readTimeout = .seconds(3600)
            configure(&configuration)
            server = try HTTPServer(configuration)
            let handler = HTTPHandler(
                atOnce: { request in
                    request.path == "/now" ? HTTPResponse(contentType: "text/plain", body: "now") : nil
                },
                work: .task { request in
                    if request.path == "/slow" {
                        try? await Task.sleep(for: slow)
                        await held?.wait()
                    }
                    let query = request.queryItems()?.map { "\($0.name)=\($0.value)" }.joined(separator: ",")
                    return HTTPResponse(
                        contentType: "text/plain",
                        headerFields: [("X-Method", request.method)],
                        body: "\(request.path) \(query ?? "malformed") \(request.body.count)"
                    )
                },
                refuse: { refusal in
                    HTTPResponse(
                        status: refusal.status,
                        contentType: "text/plain",
                        body: "\(refusal.kind) \(refusal.limit)"
                    )
                }
            )
            let server = server
            #if os(Linux)
            let loopClock = loopClock
            #endif
            Thread.detachNewThread { [returned] in
                #if os(Linux)
                var clock = clockid_t()
                if pthread_getcpuclockid(pthread_self(), &clock) == 0 { loopClock.value.withLock { $0 = clock } }
                #endif
                server.run(handler)
                returned.value.withLock { $0 = true }
            }
        }

        deinit {
            server.stop(within: .seconds(1))
        }

        var port: Int { server.port }
    }

    @Test(arguments: [false, true])
    func keepsTheConnectionForTheNextRequest(usesPoll: Bool) async throws {
        let running = try Running { $0.usesPoll = usesPoll }
        let client = try await TestClient.connect(running)
        client.send("GET /now HTTP/1.1\r\nHost: x\r\n\r\n")
        let first = try await client.answer()
        #expect(first.status == 200)
        #expect(first.body == "now")
        #expect(first.headers["connection"] == nil)
        client.send("GET /echo?a=1&b=x+y%21 HTTP/1.1\r\nHost: x\r\n\r\n")
        let second = try await client.answer()
        #expect(second.body == "/echo a=1,b=x y! 0")
        #expect(second.headers["x-method"] == "GET")
        client.send("GET /now HTTP/1.1\r\nConnection: close\r\n\r\n")
        #expect(try await client.answer().headers["connection"] == "close")
        #expect(await client.isClosedByServer())
    }

    @Test(arguments: [false, true])
    func answersPipelinedRequestsInOrder(usesPoll: Bool) async throws {
        let running = try Running { $0.usesPoll = usesPoll }
        let client = try await TestClient.connect(running)
        client.send(
            "GET /echo?n=1 HTTP/1.1\r\n\r\nGET /now HTTP/1.1\r\n\r\nPOST /echo?n=3 HTTP/1.1\r\nContent-Length: 0\r\n\r\n"
        )
        #expect(try await client.answer().body == "/echo n=1 0")
        #expect(try await client.answer().body == "now")
        #expect(try await client.answer().body == "/echo n=3 0")
    }

    @Test func readsABodyThatComesInPieces() async throws {
        let running = try Running {
            $0.limits.maximumBodyBytes = 100
            $0.limits.maximumBodyBytesInFlight = 100
        }
        let client = try await TestClient.connect(running)
        client.send("POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\n12345")
        try await Task.sleep(for: .milliseconds(100))
        client.send("67890GET /now HTTP/1.1\r\n\r\n")
        #expect(try await client.answer().body == "/echo  10")
        #expect(try await client.answer().body == "now")
        client.send("POST /echo HTTP/1.1\r\nContent-Length: 101\r\n\r\n")
        let refused = try await client.answer()
        #expect(refused.status == 413)
        #expect(refused.body == "bodyTooLarge 100")
        #expect(await client.isClosedByServer())
    }

    @Test(arguments: [
        ("GET /x HTTP/1.1\nHost: x\r\n\r\n", 400, "bareLineBreak 0"),
        ("hello\r\n\r\n", 400, "malformedRequestLine 0"),
        ("GET x HTTP/1.1\r\n\r\n", 400, "targetNotAPath 0"),
        ("GET / HTTP/1.1\r\n: x\r\n\r\n", 400, "fieldWithoutName 0"),
        ("GET / HTTP/1.1\r\nContent-Length : 5\r\n\r\n", 400, "whitespaceInFieldName 0"),
        ("GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 413, "bodyNotAccepted 0"),
        ("GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 413, "bodyNotAccepted 0"),
        ("GET / HTTP/1.1\r\nX: \(String(repeating: "a", count: 9000))\r\n\r\n", 431, "headTooLarge 8192"),
    ])
    func refusesInTheApplicationsWords(request: String, status: Int, body: String) async throws {
        let running = try Running()
        let client = try await TestClient.connect(running)
        client.send(request)
        let answer = try await client.answer()
        #expect(answer.status == status)
        #expect(answer.body == body)
        #expect(answer.headers["connection"] == "close")
        #expect(await client.isClosedByServer())
    }

    @Test func aHeadThatDoesNotComeInTimeIsAnswered408() async throws {
        let running = try Running { $0.limits.readTimeout = .seconds(1) }
        // The read timeout counts from the connection's accept, which is after this instant.
        let started = ContinuousClock.now
        let client = try await TestClient.connect(running)
        client.send("GET /now HTTP/1.1\r\n")
        let answer = try await client.answer()
        #expect(answer.status == 408)
        #expect(answer.body == "requestTimeout 1")
        #expect(ContinuousClock.now - started >= .milliseconds(900))
    }

    @Test func aSlowHandlerIsAnswered504AndItsLateAnswerDropped() async throws {
        let running = try Running({ $0.limits.handlerTimeout = .seconds(1) }, slow: .seconds(2))
        let client = try await TestClient.connect(running)
        client.send("GET /slow HTTP/1.1\r\n\r\n")
        let answer = try await client.answer()
        #expect(answer.status == 504)
        #expect(answer.body == "handlerTimeout 1")
        #expect(await client.isClosedByServer())
    }

    @Test func beyondTheRequestsAnsweredAtOnceIs503() async throws {
        // The slow request is held until the refusal came, not for a time: held 5 s, it could
        // finish first on a busy machine, and the second request was then rightly served.
        let held = Gate()
        defer { held.open() }
        let running = try Running(
            {
                $0.limits.maximumRequests = 1
                $0.limits.handlerTimeout = nil
            },
            held: held
        )
        let slow = try await TestClient.connect(running)
        slow.send("GET /slow HTTP/1.1\r\n\r\n")
        try await waitUntil { running.server.requestsInFlight > 0 }
        let refused = try await TestClient.connect(running)
        refused.send("GET /now HTTP/1.1\r\n\r\n")
        let answer = try await refused.answer()
        #expect(answer.status == 503)
        #expect(answer.body == "tooManyRequests 1")
        held.open()
        #expect(try await slow.answer().status == 200)
    }

    @Test func aStopFinishesTheRequestInFlightAndClosesIdleConnections() async throws {
        // The slow request is held until after the stop, not for a time: held 500 ms, it could be
        // answered before the stop on a busy machine (kept alive, without `Connection: close`).
        let held = Gate()
        defer { held.open() }
        let running = try Running({ $0.limits.handlerTimeout = nil }, held: held)
        let idle = try await TestClient.connect(running)
        idle.send("GET /now HTTP/1.1\r\n\r\n")
        let first = try await idle.answer()
        #expect(first.status == 200, "\(first.statusLine): \(first.body)")
        let busy = try await TestClient.connect(running)
        busy.send("GET /slow HTTP/1.1\r\n\r\n")
        try await waitUntil { running.server.requestsInFlight > 0 }
        // Grace for a busy machine to come to the opening of the gate below.
        running.server.stop(within: .seconds(600))
        #expect(await idle.isClosedByServer())
        held.open()
        let answer = try await busy.answer()
        #expect(answer.status == 200)
        #expect(answer.headers["connection"] == "close")
        try await waitUntil { running.stopped }
        #expect(running.stopped)
    }

    /// A `HEAD` answer is its head alone (RFC 9110, section 9.3.2): a body after it was read by a
    /// kept-alive client as the start of the next answer (Node's http module failed its next
    /// request with a parse error).
    @Test(arguments: [false, true])
    func anAnswerToHEADHasNoBody(usesPoll: Bool) async throws {
        let running = try Running { $0.usesPoll = usesPoll }
        let client = try await TestClient.connect(running)
        client.send("HEAD /now HTTP/1.1\r\n\r\nHEAD /echo?a=1 HTTP/1.1\r\n\r\nGET /now HTTP/1.1\r\n\r\n")
        let atOnce = try await client.answer(headOnly: true)
        #expect(atOnce.statusLine == "HTTP/1.1 200 OK")
        #expect(atOnce.headers["content-length"] == "3")
        let fromTask = try await client.answer(headOnly: true)
        #expect(fromTask.statusLine == "HTTP/1.1 200 OK")
        #expect(fromTask.headers["x-method"] == "HEAD")
        let get = try await client.answer()
        #expect(get.statusLine == "HTTP/1.1 200 OK")
        #expect(get.body == "now")
    }

    /// Once stopped, the server takes no new connection: one made while the requests in flight
    /// finish is refused at once (or answered 503), never left waiting for the grace period and
    /// then reset.
    @Test func aConnectionMadeWhileAStopFinishesIsRefusedNotReset() async throws {
        let running = try Running({ $0.eventLoops = 1 }, slow: .seconds(3))
        let idle = try await TestClient.connect(running)
        idle.send("GET /now HTTP/1.1\r\n\r\n")
        let first = try await idle.answer()
        #expect(first.status == 200, "\(first.statusLine): \(first.body)")
        let busy = try await TestClient.connect(running)
        busy.send("GET /slow HTTP/1.1\r\n\r\n")
        try await waitUntil { running.server.requestsInFlight > 0 }
        running.server.stop(within: .seconds(30))
        // The loop has seen the stop once it closes the idle connection.
        #expect(await idle.isClosedByServer())
        if let late = try? await TestClient.connect(running) {
            late.send("GET /now HTTP/1.1\r\n\r\n")
            let answer = try await late.answer()
            #expect(answer.status == 503)
            #expect(answer.body == "tooManyConnections 1024")
        }
        #expect(try await busy.answer().status == 200)
    }

    /// A second stop may bring the deadline closer, never put it later: an operator's second
    /// SIGTERM would otherwise hold the process past the grace it was given.
    @Test func aSecondStopNeverPutsTheDeadlineLater() async throws {
        // The request is held for as long as the test runs, and the second stop gives an hour: a
        // server that took the later deadline is still running when the wait gives up.
        let held = Gate()
        defer { held.open() }
        let running = try Running({ $0.limits.handlerTimeout = nil }, held: held)
        let busy = try await TestClient.connect(running)
        busy.send("GET /slow HTTP/1.1\r\n\r\n")
        try await waitUntil { running.server.requestsInFlight > 0 }
        running.server.stop(within: .milliseconds(100))
        running.server.stop(within: .seconds(3600))
        try await waitUntil(atMost: .seconds(120)) { running.stopped }
        #expect(running.stopped)
        #expect(await busy.isClosedByServer())
    }

    #if os(Linux)
    /// With `poll(2)`, a connection whose client reset it while its handler runs reports a hang-up
    /// whatever it is watched for: the loop must not wake for it again and again until the answer
    /// comes (it spun at a whole core).
    @Test func aResetWhileTheHandlerRunsCostsThePollLoopNothing() async throws {
        let running = try Running(
            {
                $0.usesPoll = true
                $0.eventLoops = 1
            },
            slow: .seconds(4)
        )
        let client = try await TestClient.connect(running)
        client.send("GET /slow HTTP/1.1\r\n\r\n")
        try await waitUntil { running.server.requestsInFlight > 0 }
        client.reset()
        try await Task.sleep(for: .milliseconds(200))
        let before = try #require(running.loopCPUTime)
        try await Task.sleep(for: .seconds(2))
        let used = try #require(running.loopCPUTime) - before
        // Waiting costs the loop microseconds; spinning took a whole core, or on a machine loaded
        // with other work its share of one (over 100 ms of these two seconds).
        #expect(used < .milliseconds(50), "the loop used \(used) of CPU while it had nothing to do")
    }
    #endif
}
