import Foundation
import ServingTestSupport
import Testing

/// The server's contract: `Sources/group-decision-server/openapi.json` is a valid OpenAPI 3.1
/// document, the one the server serves, and the live server answers every operation as it says.
@Suite("Decision server: the OpenAPI contract", .requires(.openAPITools), .requires(.pythonCryptography))
struct DecisionServerContractTests {
    static let document = TestFiles.packageRoot.appending(path: "Sources/group-decision-server/openapi.json")

    @Test("the document validates (openapi-spec-validator) and is what GET /openapi.json serves")
    func theDocumentIsValidAndServed() async throws {
        let validation = try await runProcess(
            URL(filePath: "/usr/bin/env"),
            [
                "python3", "-c",
                "import json, sys; from openapi_spec_validator import validate; "
                    + "validate(json.load(open(sys.argv[1]))); print('valid')",
                Self.document.path,
            ]
        )
        #expect(validation.status == 0, "\(validation.standardError)")
        #expect(validation.standardOutput == "valid\n")
        let server = try await DecisionServerProcess.start()
        let served = try await server.get("/openapi.json")
        #expect(served.status == 200)
        #expect(served.contentType == "application/json; charset=utf-8")
        #expect(served.text == (try String(contentsOf: Self.document, encoding: .utf8)))
    }

    /// Schemathesis generates requests from the document (its coverage and fuzzing phases, a fixed seed) and checks
    /// every answer (no 5xx, documented statuses, content types, headers and bodies, schema-invalid requests refused),
    /// not that every schema-valid request is accepted, which no document can promise here (whether `whyNot` names a
    /// capability depends on the policies loaded; `POST /invalidate` takes exactly one of three parameters, which
    /// OpenAPI cannot say); the budget is generous so that generated customers are fetched, not refused.
    @Test("schemathesis exercises every operation and finds no failure")
    func schemathesisFindsNothing() async throws {
        let server = try await DecisionServerProcess.start(arguments: ["--requests-per-second", "1000000"])
        let result = try await runProcess(
            URL(filePath: "/usr/bin/env"),
            [
                "schemathesis", "run", "http://127.0.0.1:\(server.port)/openapi.json", "--checks", "all",
                "--exclude-checks", "positive_data_acceptance", "--max-examples", "40", "--seed", "20261204",
                "--no-color",
            ]
        )
        let output = result.standardOutput + result.standardError
        #expect(result.status == 0, "\(output.suffix(3000))")
        #expect(output.contains("Selected: 8/8"), "\(output.suffix(3000))")
        #expect(output.contains("Tested: 8"), "\(output.suffix(3000))")
        #expect(!output.contains("Failures:"), "\(output.suffix(3000))")
        // Every route was asked, by the server's own access log.
        let paths = Set(server.logLines().compactMap { $0.split(separator: " ").dropFirst().first.map(String.init) })
        let routes: Set = [
            "/decision", "/workspace/members", "/invalidate", "/shadow", "/shadow/reset", "/healthz", "/readyz",
            "/metrics",
        ]
        #expect(routes.subtracting(paths) == [], "routes schemathesis never asked")
    }
}
