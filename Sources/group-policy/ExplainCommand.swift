import ArgumentParsing
import GroupPolicy

enum ExplainCommand {
    static let spec = CommandSpec(
        "explain",
        summary: "Explain why a capability is granted, denied or not granted in each group of a response.",
        options: [
            .init("policy", value: "file", help: "The policy file (or a directory: a policy set).", required: true),
            .init("response", value: "file", help: "The response JSON; '-' reads standard input.", required: true),
            .init("capability", value: "name", help: "The capability to explain.", required: true),
            .init("group", value: "id", help: "Explain only this group of the response."),
            .init("environment", value: "env", help: "production (default) or sandbox."),
            .init(
                "entitlement",
                value: "e",
                help: "An entitlement from verified transactions (repeatable).",
                repeatable: true
            ),
            .flag("json", help: "Print the explanation as JSON instead of text."),
        ],
        details:
            "Exit status: 0 printed an explanation (whatever the outcome), 1 the capability is not declared or the "
            + "policy does not load, 2 bad usage or unreadable/invalid response."
    )

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        let policyPath = try arguments.requiredValue("policy")
        let responsePath = try arguments.requiredValue("response")
        let capability = try arguments.requiredValue("capability")
        let environment = try parseEnvironment(arguments, default: .production)
        let policy = try loadPolicy(policyPath)
        let response = try readResponse(responsePath)
        let context = EvaluationContext(environment: environment, entitlements: Set(arguments.all("entitlement")))
        let explanation: Explanation
        do {
            explanation = try policy.explain(
                Capability(capability),
                for: response,
                in: context,
                group: arguments.value("group")
            )
        } catch {
            // The library names the call's parameter that narrows the request; this command's
            // option for it is `--group`.
            let narrowing = error.narrowingParameter == "group" ? " with --group" : ""
            throw CommandFailure(error.code == .undeclaredCapability ? .failure : .unusable, error.message + narrowing)
        }
        Terminal.out(arguments.has("json") ? explanation.jsonString() : explanation.text)
    }
}
