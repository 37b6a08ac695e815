import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy
import ServingTestSupport
import Testing

/// Header field names with whitespace: a server must refuse them (RFC 9112, section 5.1), or a
/// `Content-Length : 5` it ignores while a proxy honours it announces a body the server never reads.
@Suite("Decision server: header field names")
struct DecisionServerHeaderFieldTests {
    @Test("whitespace in or before a field name is a 400", .requires(.pythonCryptography))
    func whitespaceInFieldNames() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
        for head in [
            "GET /decision?transactionId=ok HTTP/1.1\r\nContent-Length : 5\r\n\r\nhello",
            "GET /decision?transactionId=ok HTTP/1.1\r\nTransfer-Encoding\t: chunked\r\n\r\n0\r\n\r\n",
            "GET /decision?transactionId=ok HTTP/1.1\r\nX Forwarded: a\r\n\r\n",
            "GET /decision?transactionId=ok HTTP/1.1\r\n: empty\r\n\r\n",
        ] {
            let answer = try await server.exchange(head)
            #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(head.debugDescription)")
            #expect(answer.hasSuffix(#"{"error":{"code":"bad-request","message":"malformed header field"}}"#))
        }
        #expect(try await store.log().isEmpty)
    }

    @Test(
        "a bare CR or LF, a NUL, or a version other than HTTP/1.0 and 1.1 is a 400, and nothing goes upstream",
        .requires(.pythonCryptography)
    )
    func bareLineBreaksInTheHead() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
        let refusals = [
            ("GET /decision?transactionId=ok HTTP/1.1\r\nHost: x\nContent-Length: 5\r\n\r\nhello", "bare"),
            ("GET /decision?transactionId=ok HTTP/1.1\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "bare"),
            ("GET /decision?transactionId=ok HTTP/1.1\r\nX: a\rContent-Length: 5\r\n\r\nhello", "bare"),
            ("GET /decision?transactionId=ok HTTP/1.1\r\nX: a\u{0}b\r\n\r\n", "bare"),
            ("GET /decision?transactionId=ok HTTP/1.9\r\n\r\n", "version"),
        ]
        for (head, kind) in refusals {
            let answer = try await server.exchange(head)
            #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(head.debugDescription)")
            let message =
                kind == "bare" ? "a bare CR or LF, or a NUL, in the request head" : "not an HTTP/1.1 request line"
            #expect(answer.hasSuffix(#"{"error":{"code":"bad-request","message":"\#(message)"}}"#))
        }
        #expect(try await store.log().isEmpty)
    }

    @Test(
        "a head with LF-only line ends, or a bare LF, CR or NUL before its end, is a 400 at once, not a 408 later",
        .requires(.pythonCryptography)
    )
    func brokenHeadsAreRefusedAtOnce() async throws {
        let store = try await FakeAppStore()
        // A read timeout far beyond the exchange's 10-second wait: a head that waited for its
        // CR LF CR LF would get nothing in time (it waited for the 408 before).
        let server = try await DecisionServerProcess.start(appStore: store, arguments: ["--read-timeout", "120"])
        for head in [
            "GET /decision?transactionId=ok HTTP/1.1\nHost: x\n\n",
            "GET /decision?transactionId=ok HTTP/1.1\n",
            "GET /decision?transactionId=ok HTTP/1.1\r\nHost: x\n",
            "GET /decision?transactionId=ok HTTP/1.1\r\nX: a\rb",
            "GET /decision?transactionId=ok HTTP/1.1\r\nX: \u{0}",
            "\n",
        ] {
            let answer = try await server.exchange(head)
            #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), "\(head.debugDescription)")
            #expect(
                answer.hasSuffix(
                    #"{"error":{"code":"bad-request","message":"a bare CR or LF, or a NUL, in the request head"}}"#
                ),
                "\(head.debugDescription)"
            )
        }
        #expect(try await store.log().isEmpty)
    }
}
