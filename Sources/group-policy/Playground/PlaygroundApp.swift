import Foundation
import GroupPolicy
import GroupPolicyBasics
import GroupPolicyTooling

/// The playground's routes: the page and its script and style, the directory's files, and one
/// route per answer, each computed by the code the CLI's commands run.
///
/// Every request must name this playground's loopback address in `Host` (421 otherwise: a page
/// of another site reaching it through DNS rebinding names its own host). Every `POST` must come
/// from the playground's own page: its `Origin` is `http://127.0.0.1:PORT` or
/// `http://localhost:PORT` (403 otherwise, and when it is missing: browsers send it with every
/// `POST`, so only a client that is not a browser lacks it, and it can send one), and its body is
/// JSON (415 otherwise, so that no cross-site form can post one). An answer that the inputs make
/// impossible (a policy that does not load, an invalid response) is `200` with `{"error": …}`, the
/// line the CLI prints: the page shows it as it would any other answer.
struct PlaygroundApp: Sendable {
    /// The policy directory, as given.
    var directory: String
    /// The port the server listens on.
    var port: Int
    /// The response file of `--response`, if given, read when the page loads.
    var responseFile: String?

    /// The most bytes of a request body: the policy set limit of one command (32 MiB) and the
    /// response limit (1 MiB), plus 1 MiB for the JSON around them.
    static let maximumBodyBytes = (32 << 20) + ResponseLimits.default.maximumBytes + (1 << 20)

    func handle(_ request: HTTPRequest) -> HTTPResponse {
        do {
            return try route(request)
        } catch {
            return .error(error.message, status: error.status)
        }
    }

    private func route(_ request: HTTPRequest) throws(PlaygroundFailure) -> HTTPResponse {
        try checkHost(request)
        if let asset = PlaygroundAssets.byPath[request.path] {
            guard request.method == "GET" else { throw notAllowed(request, allowing: "GET") }
            return HTTPResponse(contentType: asset.contentType, body: asset.body)
        }
        if request.path == "/api/files" {
            guard request.method == "GET" else { throw notAllowed(request, allowing: "GET") }
            return try files()
        }
        guard let answer = Self.answers[request.path] else {
            throw PlaygroundFailure(.notFound, "no such page: \(request.path)")
        }
        guard request.method == "POST" else { throw notAllowed(request, allowing: "POST") }
        try checkOrigin(request)
        guard request.header("content-type")?.lowercased().hasPrefix("application/json") == true else {
            throw PlaygroundFailure(.unsupportedMediaType, "a POST body must be JSON (Content-Type: application/json)")
        }
        return try answer(self)(PlaygroundRequest.decode(request.body))
    }

    /// The `POST` routes.
    private static let answers: [String: @Sendable (PlaygroundApp) -> (PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse] = [
        "/api/check": { app in { request throws(PlaygroundFailure) in try app.check(request) } },
        "/api/decision": { app in { request throws(PlaygroundFailure) in try app.decision(request) } },
        "/api/explain": { app in { request throws(PlaygroundFailure) in try app.explain(request) } },
        "/api/tests": { app in { request throws(PlaygroundFailure) in try app.tests(request) } },
        "/api/matrix": { app in { request throws(PlaygroundFailure) in try app.matrix(request) } },
        "/api/save": { app in { request throws(PlaygroundFailure) in try app.save(request) } },
    ]

    // MARK: Refusals

    /// The `Host` values that name this playground: its loopback names with its port.
    var allowedHosts: Set<String> {
        ["127.0.0.1:\(port)", "localhost:\(port)", "[::1]:\(port)"]
    }

    /// The origins of the playground's own page.
    var allowedOrigins: Set<String> {
        ["http://127.0.0.1:\(port)", "http://localhost:\(port)"]
    }

    private func checkHost(_ request: HTTPRequest) throws(PlaygroundFailure) {
        guard let host = request.header("host") else {
            throw PlaygroundFailure(.badRequest, "a request needs one Host header")
        }
        guard allowedHosts.contains(host.lowercased()) else {
            throw PlaygroundFailure(
                .misdirectedRequest,
                "refused: Host '\(host)' is not this playground's loopback address (127.0.0.1:\(port))"
            )
        }
    }

    private func checkOrigin(_ request: HTTPRequest) throws(PlaygroundFailure) {
        guard let origin = request.header("origin") else {
            throw PlaygroundFailure(.forbidden, "refused: a POST needs the Origin of this playground (http://127.0.0.1:\(port))")
        }
        guard allowedOrigins.contains(origin.lowercased()) else {
            throw PlaygroundFailure(.forbidden, "refused: Origin '\(origin)' is not this playground's (http://127.0.0.1:\(port))")
        }
    }

    private func notAllowed(_ request: HTTPRequest, allowing method: String) -> PlaygroundFailure {
        PlaygroundFailure(.methodNotAllowed, "\(request.method) is not allowed on \(request.path) (use \(method))")
    }

    // MARK: Inputs

    /// The directory with the request's edits.
    private func workbench(_ edits: [String: [UInt8]]) throws(PlaygroundFailure) -> PolicyWorkbench {
        do {
            return try PolicyWorkbench(directory: directory, edits: edits)
        } catch {
            throw PlaygroundFailure(.badRequest, error.message)
        }
    }

    /// An answer that the inputs make impossible: the CLI's line, as the page shows it.
    private struct Unanswerable: Error {
        var message: String
    }

    /// The edited policy set, or the line `eval --policy DIR` would fail with.
    private func policy(_ workbench: PolicyWorkbench) throws(Unanswerable) -> Policy {
        do {
            return try workbench.policy()
        } catch {
            let first = error.diagnostics.first { $0.severity == .error }?.description ?? error.message
            throw Unanswerable(message: "policy \(directory) does not load: \(first)")
        }
    }

    /// The response and context of a request, as `eval` reads `--response`, `--environment` and
    /// `--entitlement`.
    private func customer(
        _ request: PlaygroundRequest
    ) throws(Unanswerable) -> (response: GetCustomerGroupsResponse, context: EvaluationContext) {
        let context = try context(request)
        do {
            let bytes = Array((request.response ?? "").utf8)
            return (try decodeResponse(bytes, fileName: request.responseName ?? "response"), context)
        } catch {
            throw Unanswerable(message: error.message ?? "invalid response")
        }
    }

    /// The context of a request, as `eval` reads `--environment` and `--entitlement`.
    private func context(_ request: PlaygroundRequest) throws(Unanswerable) -> EvaluationContext {
        var environment = StoreEnvironment.production
        if let name = request.environment {
            guard let named = storeEnvironment(named: name) else {
                throw Unanswerable(message: unknownEnvironment(name))
            }
            environment = named
        }
        return EvaluationContext(environment: environment, entitlements: Set(request.entitlements ?? []))
    }

    private static func answer(_ body: () throws(Unanswerable) -> String) -> HTTPResponse {
        do {
            return .json(try body())
        } catch {
            return .json(PlaygroundJSON.object(["error": PlaygroundJSON.string(error.message.escapingControlCharacters)]))
        }
    }

    // MARK: Answers

    /// `GET /api/files`: the directory's policy files and the responses to choose from.
    private func files() throws(PlaygroundFailure) -> HTTPResponse {
        let workbench = try workbench([:])
        var policyFiles: [String] = []
        for path in workbench.policyFiles {
            let bytes: [UInt8]
            do {
                bytes = try BoundedFileReader.read(path, maximumBytes: PolicyLimits.default.maximumBytes)
            } catch {
                throw PlaygroundFailure(.internalServerError, error.message)
            }
            policyFiles.append(
                PlaygroundJSON.object([
                    "name": PlaygroundJSON.string(PolicyWorkbench.fileName(of: path)),
                    "text": PlaygroundJSON.string(String(decoding: bytes, as: UTF8.self)),
                ])
            )
        }
        let responses = PlaygroundResponses.choices(directory: directory, responseFile: responseFile).map {
            PlaygroundJSON.object(["name": PlaygroundJSON.string($0.name), "text": PlaygroundJSON.string($0.text)])
        }
        return .json(
            PlaygroundJSON.object([
                "directory": PlaygroundJSON.string(directory),
                "files": "[" + policyFiles.joined(separator: ",") + "]",
                "responses": "[" + responses.joined(separator: ",") + "]",
            ])
        )
    }

    /// `POST /api/check`: `check DIR` with the edits.
    private func check(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
        let workbench = try workbench(request.edits)
        return Self.answer { () throws(Unanswerable) in
            do throws(GroupPolicyError) {
                return PlaygroundJSON.object(["check": try workbench.check().jsonString()])
            } catch {
                throw Unanswerable(message: error.message)
            }
        }
    }

    /// `POST /api/decision`: `eval --explain` with the edits, and the declared capabilities.
    private func decision(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
        let workbench = try workbench(request.edits)
        return Self.answer { () throws(Unanswerable) in
            let policy = try policy(workbench)
            let (response, context) = try customer(request)
            let decision = policy.evaluate(response, in: context)
            let provenance = decision.grantCount + decision.denialCount
            guard provenance <= EvalCommand.maximumProvenanceEntries else {
                throw Unanswerable(
                    message: "the decision has \(provenance) grants and denials; the playground shows at most "
                        + "\(EvalCommand.maximumProvenanceEntries) (the limit on provenance entries)"
                )
            }
            let capabilities = policy.capabilities.map { capability in
                PlaygroundJSON.object([
                    "name": PlaygroundJSON.string(capability.name),
                    "kind": PlaygroundJSON.string(policy.kind(of: capability)?.rawValue ?? "presentation"),
                    "description": policy.description(of: capability).map(PlaygroundJSON.string) ?? "null",
                ])
            }
            return PlaygroundJSON.object([
                "decision": decision.jsonString(includingProvenance: true, pretty: false),
                "capabilities": "[" + capabilities.joined(separator: ",") + "]",
            ])
        }
    }

    /// `POST /api/explain`: `explain --capability C [--group G]` with the edits: why a capability
    /// is granted, denied, or not granted (why not).
    private func explain(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
        guard let capability = request.capability else {
            throw PlaygroundFailure(.badRequest, "the request names no 'capability' to explain")
        }
        let workbench = try workbench(request.edits)
        return Self.answer { () throws(Unanswerable) in
            let policy = try policy(workbench)
            let (response, context) = try customer(request)
            do throws(GroupPolicyError) {
                let explanation = try policy.explain(Capability(capability), for: response, in: context, group: request.group)
                return PlaygroundJSON.object([
                    "capability": PlaygroundJSON.string(capability),
                    "text": PlaygroundJSON.string(explanation.text),
                    "explanation": explanation.jsonString(pretty: false),
                ])
            } catch {
                throw Unanswerable(message: error.message)
            }
        }
    }

    /// `POST /api/tests`: `test --coverage DIR` with the edits.
    private func tests(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
        let workbench = try workbench(request.edits)
        return Self.answer { () throws(Unanswerable) in
            do throws(GroupPolicyError) {
                return PlaygroundJSON.object(["tests": try workbench.runTests().jsonString()])
            } catch {
                throw Unanswerable(message: error.message)
            }
        }
    }

    /// `POST /api/matrix`: every scenario against every capability, the cells that changed
    /// against the saved files, and `diff SAVED EDITED` as JSON and as the CLI's table.
    private func matrix(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
        let workbench = try workbench(request.edits)
        return Self.answer { () throws(Unanswerable) in
            let policy = try policy(workbench)
            let context = try context(request)
            // A saved set that does not load marks nothing: every cell is compared with itself.
            let saved = try? workbench.savedPolicy()
            do throws(GroupPolicyError) {
                let matrix = try ScenarioMatrix(policy: policy, savedPolicy: saved, context: context)
                let diff = try saved.map { saved throws(GroupPolicyError) in try PolicyDiff(from: saved, to: policy) }
                return PlaygroundJSON.object([
                    "matrix": matrix.jsonString(),
                    "diff": diff?.jsonString(pretty: false) ?? "null",
                    "diffTable": diff.map { PlaygroundJSON.string($0.table) } ?? "null",
                ])
            } catch {
                throw Unanswerable(message: error.message)
            }
        }
    }

    /// `POST /api/save`: writes one edited file, when the directory with that edit (and no other)
    /// checks without errors (see ``PolicyFileSaver``).
    private func save(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
        guard let name = request.file else { throw PlaygroundFailure(.badRequest, "the request names no 'file' to save") }
        let saver = PolicyFileSaver(directory: directory)
        let path = try saver.destination(of: name)
        guard let text = request.files?[name] else {
            throw PlaygroundFailure(.badRequest, "the request holds no edit of '\(name)' to save")
        }
        let bytes = Array(text.utf8)
        let edited = try workbench([name: bytes])
        let report: PolicyCheckReport
        do {
            report = try edited.check()
        } catch {
            throw PlaygroundFailure(.unprocessableContent, "not saved: \(error.message)")
        }
        guard report.summary.errors == 0 else {
            throw PlaygroundFailure(
                .unprocessableContent,
                "not saved: with this edit the directory checks with \(counted(report.summary.errors, "error"))"
            )
        }
        try saver.write(bytes, to: path)
        return .json(
            PlaygroundJSON.object(["saved": PlaygroundJSON.string(name), "bytes": String(bytes.count)])
        )
    }
}
