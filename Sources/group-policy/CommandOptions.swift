import ArgumentParsing
import GroupPolicy

/// The options and helpers several commands share, spelt and explained once.
extension CommandSpec.Option {
    /// `--policy FILE`: a policy file or a policy set's directory.
    static let policyFile = CommandSpec.Option(
        "policy",
        value: "file",
        help: "The policy file (or a directory: a policy set).",
        required: true
    )

    /// `--response FILE`: Apple's Get Customer Groups response, or `-` for standard input.
    static let responseFile = CommandSpec.Option(
        "response",
        value: "file",
        help: "The response JSON; '-' reads standard input.",
        required: true
    )

    /// `--allow-outside`: a test case's `responseFile` may lie outside its test file's project.
    static let allowOutside = CommandSpec.Option.flag(
        "allow-outside",
        help: "Let a test case's responseFile be any regular file, not only one in its test file's project."
    )

    /// `--environment production|sandbox` for evaluating (Production unless told otherwise).
    static let evaluationEnvironment = CommandSpec.Option(
        "environment",
        value: "env",
        help: "production (default) or sandbox."
    )

    /// `--entitlement E`, repeatable: entitlements the app verified.
    static func entitlement(help: String = "An entitlement from verified transactions (repeatable).") -> Self {
        CommandSpec.Option("entitlement", value: "e", help: help, repeatable: true)
    }
}

extension ParsedArguments {
    /// The value of a positive-number option, or `defaultValue` when it is not given; anything else
    /// is bad usage: `--budget needs a positive number of scenarios, not 'x'`.
    func positiveNumber(_ name: String, of unit: String, default defaultValue: Int) throws(CommandFailure) -> Int {
        guard let text = value(name) else { return defaultValue }
        guard let number = Int(text), number > 0 else {
            throw usage("--\(name) needs a positive number of \(unit), not '\(text)'")
        }
        return number
    }

    /// What `eval` and `explain` evaluate: the policy of `--policy`, the response of `--response`,
    /// and the context of `--environment` and `--entitlement`.
    func evaluationInputs() throws(CommandFailure) -> (
        policy: Policy, response: GetCustomerGroupsResponse, context: EvaluationContext
    ) {
        let policyPath = try requiredValue("policy")
        let responsePath = try requiredValue("response")
        let environment = try parseEnvironment(self, default: .production)
        let policy = try loadPolicy(policyPath)
        let response = try readResponse(responsePath)
        return (policy, response, EvaluationContext(environment: environment, entitlements: Set(all("entitlement"))))
    }
}

/// `--environment production|sandbox` (any case), as the CLI spells environments.
func parseEnvironment(
    _ arguments: ParsedArguments,
    default: StoreEnvironment
) throws(CommandFailure) -> StoreEnvironment {
    guard let value = arguments.value("environment") else { return `default` }
    guard let environment = storeEnvironment(named: value) else { throw arguments.usage(unknownEnvironment(value)) }
    return environment
}

/// An environment as the CLI spells it: `production` or `sandbox`, in any case.
func storeEnvironment(named value: String) -> StoreEnvironment? {
    switch value.lowercased() {
    case "production": return .production
    case "sandbox": return .sandbox
    default: return nil
    }
}

/// The one line for an environment the CLI does not know.
func unknownEnvironment(_ value: String) -> String {
    "unknown environment '\(value)' (use production or sandbox)"
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

/// `1 policy`, `2 policies`.
func counted(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}
