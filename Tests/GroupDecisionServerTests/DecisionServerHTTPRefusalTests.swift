import Foundation
import ServingTestSupport
import Testing

/// What the HTTP layer refuses before a route sees it, and never sends upstream: methods, bodies
/// and heads out of bounds, and heads a proxy could read differently (RFC 9112, sections 2.2 and
/// 5.1: whitespace in a field name, a bare CR or LF, a NUL), each refused at once.
@Suite("Decision server: requests the HTTP layer refuses", .requires(.pythonCryptography))
struct DecisionServerHTTPRefusalTests {
    static let malformed = #"{"error":{"code":"bad-request","message":"malformed header field"}}"#
    static let bare = #"{"error":{"code":"bad-request","message":"a bare CR or LF, or a NUL, in the request head"}}"#
    static let version = #"{"error":{"code":"bad-request","message":"not an HTTP/1.1 request line"}}"#
    static let badRequest = "HTTP/1.1 400 Bad Request\r\n"

    /// Each request, the start of its answer, and the end of its answer.
    static let refusals: [(String, String, String)] = [
        ("POST /decision?transactionId=ok HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 405 Method Not Allowed\r\n", ""),
        (
            "GET /decision?transactionId=ok HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
            "HTTP/1.1 413 Content Too Large\r\n", ""
        ),
        (
            "GET /decision HTTP/1.1\r\nX-Filler: \(String(repeating: "a", count: 9000))\r\n\r\n",
            "HTTP/1.1 431 Request Header Fields Too Large\r\n", ""
        ),
        // Whitespace in or before a field name: a `Content-Length : 5` the server ignored while a
        // proxy honoured it would announce a body the server never reads.
        ("GET /decision?transactionId=ok HTTP/1.1\r\nContent-Length : 5\r\n\r\nhello", badRequest, malformed),
        (
            "GET /decision?transactionId=ok HTTP/1.1\r\nTransfer-Encoding\t: chunked\r\n\r\n0\r\n\r\n",
            badRequest, malformed
        ),
        ("GET /decision?transactionId=ok HTTP/1.1\r\nX Forwarded: a\r\n\r\n", badRequest, malformed),
        ("GET /decision?transactionId=ok HTTP/1.1\r\n: empty\r\n\r\n", badRequest, malformed),
        ("GET /decision?transactionId=ok HTTP/1.1\r\nHost: x\nContent-Length: 5\r\n\r\nhello", badRequest, bare),
        ("GET /decision?transactionId=ok HTTP/1.1\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", badRequest, bare),
        ("GET /decision?transactionId=ok HTTP/1.1\r\nX: a\rContent-Length: 5\r\n\r\nhello", badRequest, bare),
        ("GET /decision?transactionId=ok HTTP/1.1\r\nX: a\u{0}b\r\n\r\n", badRequest, bare),
        ("GET /decision?transactionId=ok HTTP/1.9\r\n\r\n", badRequest, version),
        // Heads that never end as a head should: refused at once, not answered 408 once the read
        // timeout (two minutes here, beyond the client's minute) has passed.
        ("GET /decision?transactionId=ok HTTP/1.1\nHost: x\n\n", badRequest, bare),
        ("GET /decision?transactionId=ok HTTP/1.1\n", badRequest, bare),
        ("GET /decision?transactionId=ok HTTP/1.1\r\nHost: x\n", badRequest, bare),
        ("GET /decision?transactionId=ok HTTP/1.1\r\nX: a\rb", badRequest, bare),
        ("GET /decision?transactionId=ok HTTP/1.1\r\nX: \u{0}", badRequest, bare),
        ("\n", badRequest, bare),
    ]

    @Test("methods, bodies, heads out of bounds and malformed heads are refused at once; nothing goes upstream")
    func refusals() async throws {
        let server = try await DecisionServerProcess.start(arguments: ["--read-timeout", "120"])
        for (request, start, end) in Self.refusals {
            let answer = try await server.exchange(request)
            #expect(answer.raw.hasPrefix(start), "\(request.debugDescription): \(answer.raw.prefix(60))")
            #expect(answer.raw.hasSuffix(end), "\(request.debugDescription): \(answer.raw.suffix(80))")
            if answer.status == 405 { #expect(answer.raw.contains("\r\nAllow: GET\r\n")) }
        }
        #expect(try await server.appStore.log().isEmpty)
    }

    @Test("a client that never finishes its head is answered 408 once the read timeout passes")
    func slowHead() async throws {
        let server = try await DecisionServerProcess.start(arguments: ["--read-timeout", "1"])
        let started = ContinuousClock.now
        let slow = try await server.exchange("GET /decision?transactionId=ok HTTP/1.1\r\nHost: x\r\n")
        #expect(slow.raw.hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        #expect(ContinuousClock.now - started >= .milliseconds(900))
        #expect(slow.text == #"{"error":{"code":"request-timeout","message":"the request did not arrive in time"}}"#)
        #expect(try await server.appStore.log().isEmpty)
    }
}
