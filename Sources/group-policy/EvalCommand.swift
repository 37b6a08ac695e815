import ArgumentParsing
import GroupPolicy

enum EvalCommand {
    static let spec = CommandSpec(
        "eval",
        summary: "Evaluate a Get Customer Groups response against a policy and print the Decision JSON.",
        options: [
            .init("policy", value: "file", help: "The policy file (or a directory: a policy set).", required: true),
            .init("response", value: "file", help: "The response JSON; '-' reads standard input.", required: true),
            .init("environment", value: "env", help: "production (default) or sandbox."),
            .init(
                "entitlement",
                value: "e",
                help: "An entitlement from verified transactions (repeatable).",
                repeatable: true
            ),
            .flag("explain", help: "Include grants and denials with provenance."),
        ],
        details:
            "Exit status: 0 printed a decision, 1 the policy does not load, 2 bad usage or unreadable/invalid response."
    )

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        let policyPath = try arguments.requiredValue("policy")
        let responsePath = try arguments.requiredValue("response")
        let environment = try parseEnvironment(arguments, default: .production)
        let policy = try loadPolicy(policyPath)
        let response = try readResponse(responsePath)
        let context = EvaluationContext(environment: environment, entitlements: Set(arguments.all("entitlement")))
        let decision = policy.evaluate(response, in: context)
        let explain = arguments.has("explain")
        let provenance = decision.grantCount + decision.denialCount
        if explain && provenance > maximumProvenanceEntries {
            throw CommandFailure(
                .unusable,
                "the decision has \(provenance) grants and denials; --explain prints at most "
                    + "\(maximumProvenanceEntries) (the limit on provenance entries): explain one capability "
                    + "with 'group-policy explain', or evaluate without --explain"
            )
        }
        Terminal.out(decision.jsonString(includingProvenance: explain))
    }

    /// The most grants and denials `eval --explain` prints: 1,000,000 (about 150 MB of JSON).
    ///
    /// A policy and a response within their own limits can yield tens of millions (each group times
    /// each rule naming its products), gigabytes of output; past this the command refuses at once.
    static let maximumProvenanceEntries = 1_000_000
}

/// `--environment production|sandbox` (any case), as the CLI spells environments.
func parseEnvironment(
    _ arguments: ParsedArguments,
    default: StoreEnvironment
) throws(CommandFailure) -> StoreEnvironment {
    guard let value = arguments.value("environment") else { return `default` }
    switch value.lowercased() {
    case "production": return .production
    case "sandbox": return .sandbox
    default: throw arguments.usage("unknown environment '\(value)' (use production or sandbox)")
    }
}

/// Loads a policy file or directory; an unreadable path is exit 2, a policy with errors exit 1
/// with every diagnostic on stderr.
func loadPolicy(_ path: String) throws(CommandFailure) -> Policy {
    do {
        return try Policy(contentsOf: path)
    } catch {
        if error.code == .unreadableFile { throw CommandFailure(.unusable, error.message) }
        for diagnostic in error.diagnostics { Terminal.err(diagnostic.description) }
        if error.diagnostics.isEmpty { Terminal.err(error.description) }
        throw CommandFailure(.failure, "policy \(path) does not load")
    }
}
