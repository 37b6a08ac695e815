import GroupPolicy
import GroupPolicyBasics
import GroupPolicyTooling
import HTTPServing

/// The playground's answers, each the work of one CLI command on the request's edits and customer.
extension PlaygroundApp {
    // MARK: Inputs

    /// The directory with the request's edits.
    func workbench(_ edits: [String: [UInt8]]) throws(PlaygroundFailure) -> PolicyWorkbench {
        do {
            return try PolicyWorkbench(
                directory: directory,
                edits: edits,
                allowsResponseFilesOutside: allowsResponseFilesOutside
            )
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
        let bytes = Array((request.response ?? "").utf8)
        let name = request.responseName ?? "response"
        // Refused as `eval --response NAME` refuses a file of that size, before decoding.
        let limit = ResponseLimits.default.maximumBytes
        guard bytes.count <= limit else {
            throw Unanswerable(message: "\(name): file of \(bytes.count) bytes is over the limit of \(limit) bytes")
        }
        do {
            return (try GetCustomerGroupsResponse(jsonBytes: bytes, fileName: name), context)
        } catch {
            // The line `eval --response NAME` prints for it.
            throw Unanswerable(message: "invalid response: \(error)")
        }
    }

    /// The context of a request, as `eval` reads `--environment` and `--entitlement`.
    private func context(_ request: PlaygroundRequest) throws(Unanswerable) -> EvaluationContext {
        var environment = StoreEnvironment.production
        if let name = request.environment {
            // As `--environment` spells them, in any case.
            switch name.lowercased() {
            case "production": environment = .production
            case "sandbox": environment = .sandbox
            default: throw Unanswerable(message: "unknown environment '\(name)' (use production or sandbox)")
            }
        }
        return EvaluationContext(environment: environment, entitlements: Set(request.entitlements ?? []))
    }

    private static func answer(_ body: () throws(Unanswerable) -> String) -> HTTPResponse {
        do {
            return .json(try body())
        } catch {
            return .json(
                PlaygroundJSON.object(["error": PlaygroundJSON.string(error.message.escapingControlCharacters)])
            )
        }
    }

    // MARK: Answers

    /// `GET /api/files`: the engine's version, the directory's policy files and then its test files
    /// (each with its text, its ``FileVersion``, which a save names, and its `kind`, `policy` or
    /// `tests`) and the responses to choose from.
    func files() throws(PlaygroundFailure) -> HTTPResponse {
        let workbench = try workbench([:])
        var policyFiles: [String] = []
        for path in workbench.policyFiles + workbench.testFiles {
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
                    "version": PlaygroundJSON.string(FileVersion(of: bytes).description),
                    "kind": PlaygroundJSON.string(workbench.testFiles.contains(path) ? "tests" : "policy"),
                ])
            )
        }
        let responses = PlaygroundResponses.choices(workbench: workbench, first: response).map {
            PlaygroundJSON.object(["name": PlaygroundJSON.string($0.name), "text": PlaygroundJSON.string($0.text)])
        }
        return .json(
            PlaygroundJSON.object([
                "engine": PlaygroundJSON.string(Policy.engineVersion),
                "directory": PlaygroundJSON.string(directory),
                "files": "[" + policyFiles.joined(separator: ",") + "]",
                "responses": "[" + responses.joined(separator: ",") + "]",
            ])
        )
    }

    /// `POST /api/check`: `check DIR` with the edits.
    func check(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
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
    func decision(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
        let workbench = try workbench(request.edits)
        return Self.answer { () throws(Unanswerable) in
            let policy = try policy(workbench)
            let (response, context) = try customer(request)
            let decision = policy.evaluate(response, in: context)
            let provenance = decision.grantCount + decision.denialCount
            guard provenance <= Policy.maximumShownProvenanceEntries else {
                throw Unanswerable(
                    message: "the decision has \(provenance) grants and denials; the playground shows at most "
                        + "\(Policy.maximumShownProvenanceEntries) (the limit on provenance entries)"
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
    func explain(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
        guard let capability = request.capability else {
            throw PlaygroundFailure(.badRequest, "the request names no 'capability' to explain")
        }
        let workbench = try workbench(request.edits)
        return Self.answer { () throws(Unanswerable) in
            let policy = try policy(workbench)
            let (response, context) = try customer(request)
            do throws(GroupPolicyError) {
                let explanation = try policy.explain(
                    Capability(capability),
                    for: response,
                    in: context,
                    group: request.group
                )
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
    func tests(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
        let workbench = try workbench(request.edits)
        return Self.answer { () throws(Unanswerable) in
            do throws(GroupPolicyError) {
                return PlaygroundJSON.object(["tests": try workbench.runTests().jsonString()])
            } catch {
                throw Unanswerable(message: error.message)
            }
        }
    }

    /// `POST /api/matrix`: every scenario against every capability, a window of the cells with
    /// those that changed first, the verdict, and `diff BASELINE EDITED` as JSON and as the CLI's
    /// table (see ``PolicyComparison``).
    ///
    /// The baseline is the files on disk, or the version the author pinned (`baseline`: the
    /// pinned text of each file that differs from disk).
    func matrix(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
        let workbench = try workbench(request.edits)
        let pinned = try request.baseline.map { files throws(PlaygroundFailure) in
            try self.workbench(files.mapValues { Array($0.utf8) })
        }
        return Self.answer { () throws(Unanswerable) in
            let policy = try policy(workbench)
            let context = try context(request)
            let baseline: Policy?
            var refusal: String?
            if let pinned {
                do throws(GroupPolicyError) {
                    baseline = try pinned.policy()
                } catch {
                    // Compared with nothing, as a saved set that does not load is: no verdict.
                    baseline = nil
                    let first = error.diagnostics.first { $0.severity == .error }?.description ?? error.message
                    refusal = "the pinned baseline does not load: \(first)"
                }
            } else {
                // A saved set that does not load marks nothing: every cell is compared with itself.
                baseline = try? workbench.savedPolicy()
                if baseline == nil { refusal = "the files on disk do not load: nothing to compare with" }
            }
            do throws(GroupPolicyError) {
                let comparison = try PolicyComparison(policy: policy, baseline: baseline, context: context)
                refusal = refusal ?? comparison.diffRefusal
                return PlaygroundJSON.object([
                    "matrix": comparison.matrix.jsonString(),
                    "baseline": PlaygroundJSON.string(pinned == nil ? "disk" : "pinned"),
                    "verdict": comparison.verdict.map { PlaygroundJSON.string($0.description) } ?? "null",
                    "diff": comparison.diff?.jsonString(pretty: false) ?? "null",
                    "diffTable": comparison.diff.map { PlaygroundJSON.string($0.table) } ?? "null",
                    "diffRefusal": refusal.map(PlaygroundJSON.string) ?? "null",
                ])
            } catch {
                throw Unanswerable(message: error.message)
            }
        }
    }

    /// `POST /api/add-test`: the test case that pins what the author sees of `capability` (in
    /// `group`, or for the whole customer: a why-not) with the edits and the customer, and the text
    /// of the test file with it added, for the page to hold as an unsaved edit (see
    /// ``PolicyWorkbench/pinTestCase(capability:group:response:responseName:context:)``).
    func addTest(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
        guard let capability = request.capability else {
            throw PlaygroundFailure(.badRequest, "the request names no 'capability' to pin in a test")
        }
        let workbench = try workbench(request.edits)
        return Self.answer { () throws(Unanswerable) in
            _ = try policy(workbench)
            let (response, context) = try customer(request)
            do throws(GroupPolicyError) {
                let pinned = try workbench.pinTestCase(
                    capability: capability,
                    group: request.group,
                    response: response,
                    responseName: request.responseName ?? "the response",
                    context: context
                )
                return PlaygroundJSON.object([
                    "file": PlaygroundJSON.string(pinned.file),
                    "name": PlaygroundJSON.string(pinned.name),
                    "granted": pinned.granted ? "true" : "false",
                    "case": PlaygroundJSON.string(pinned.caseJSON),
                    "text": PlaygroundJSON.string(pinned.text),
                ])
            } catch {
                throw Unanswerable(message: error.message)
            }
        }
    }
}
