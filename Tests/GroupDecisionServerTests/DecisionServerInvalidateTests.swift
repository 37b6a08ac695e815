import Foundation
import ServingTestSupport
import Testing

/// `POST /invalidate` takes one target: a request naming two was answered 200 while one of them
/// was skipped without a word.
@Suite("Decision server: invalidation targets")
struct DecisionServerInvalidateTests {
    @Test(
        "a request naming more than one target is refused, and nothing is forgotten",
        .requires(.pythonCryptography),
        arguments: [
            (
                "/invalidate?transactionId=ok&groupId=g1",
                #"{"error":{"code":"bad-request","message":"give one of transactionId, groupId or all=true, not transactionId and groupId"}}"#
            ),
            (
                "/invalidate?groupId=g1&all=true",
                #"{"error":{"code":"bad-request","message":"give one of transactionId, groupId or all=true, not groupId and all"}}"#
            ),
            (
                "/invalidate?transactionId=ok&groupId=g1&all=true",
                #"{"error":{"code":"bad-request","message":"give one of transactionId, groupId or all=true, not transactionId and groupId and all"}}"#
            ),
        ]
    )
    func combinationsRefused(path: String, body: String) async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
        #expect(try await server.get("/decision?transactionId=ok").status == 200)
        let answer = try await server.post(path)
        #expect(answer.status == 400)
        #expect(answer.text == body)
        // The customer's answer is still cached: asking again sends nothing to the App Store.
        #expect(try await server.get("/decision?transactionId=ok").status == 200)
        #expect(try await store.log().count == 1)
    }

    @Test("one target alone is taken: the next decision fetches again", .requires(.pythonCryptography))
    func oneTargetTaken() async throws {
        let store = try await FakeAppStore()
        let server = try await DecisionServerProcess.start(appStore: store)
        #expect(try await server.get("/decision?transactionId=ok").status == 200)
        let answer = try await server.post("/invalidate?transactionId=ok")
        #expect(answer.status == 200)
        #expect(answer.text == #"{"invalidated":"ok"}"#)
        #expect(try await server.get("/decision?transactionId=ok").status == 200)
        #expect(try await store.log().count == 2)
    }
}
