import GroupPolicy

enum EvalCommand {
    static let spec = CommandSpec(
        name: "eval",
        synopsis: "--policy FILE --response FILE|- [--environment production|sandbox] [--entitlement E]... [--explain]",
        summary: "Evaluate a Get Customer Groups response against a policy and print the Decision JSON.",
        options: [
            .init(name: "policy", valueName: "FILE", help: "The policy file (or a directory: a policy set)."),
            .init(name: "response", valueName: "FILE|-", help: "The response JSON; '-' reads standard input."),
            .init(name: "environment", valueName: "ENV", help: "production (default) or sandbox."),
            .init(
                name: "entitlement",
                valueName: "E",
                help: "An entitlement from verified transactions (repeatable).",
                repeatable: true
            ),
            .init(name: "explain", help: "Include grants and denials with provenance."),
        ],
        details:
            "Exit status: 0 printed a decision, 1 the policy does not load, 2 bad usage or unreadable/invalid response."
    )

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        guard arguments.positionals.isEmpty else {
            throw CommandFailure(
                .unusable,
                "unexpected argument '\(arguments.positionals[0])' (use --policy and --response)"
            )
        }
        let policyPath: String
        let responsePath: String
        let environment: StoreEnvironment
        do {
            policyPath = try arguments.required("policy")
            responsePath = try arguments.required("response")
            environment = try parseEnvironment(arguments.value("environment") ?? "production")
        } catch {
            throw CommandFailure(.unusable, error.message)
        }
        let policy = try loadPolicy(policyPath)
        let bytes = try readInput(responsePath)
        let response: GetCustomerGroupsResponse
        do {
            response = try GetCustomerGroupsResponse(
                jsonBytes: bytes,
                fileName: responsePath == "-" ? "<stdin>" : responsePath
            )
        } catch {
            throw CommandFailure(.unusable, "invalid response: \(error)")
        }
        let context = EvaluationContext(environment: environment, entitlements: Set(arguments.all("entitlement")))
        let decision = policy.evaluate(response, in: context)
        Terminal.out(decision.jsonString(includingProvenance: arguments.has("explain")))
    }
}

/// `production` or `sandbox` (any case), as the CLI spells environments.
func parseEnvironment(_ value: String) throws(UsageError) -> StoreEnvironment {
    switch value.lowercased() {
    case "production": return .production
    case "sandbox": return .sandbox
    default: throw UsageError(message: "unknown environment '\(value)' (use production or sandbox)")
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
