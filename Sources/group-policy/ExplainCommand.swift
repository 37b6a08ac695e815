import ArgumentParsing
import GroupPolicy

enum ExplainCommand {
    static let spec = CommandSpec(
        "explain",
        summary: "Explain why a capability is granted, denied or not granted in each group of a response.",
        options: [
            .policyFile, .responseFile,
            .init("capability", value: "name", help: "The capability to explain.", required: true),
            .init("group", value: "id", help: "Explain only this group of the response."),
            .evaluationEnvironment, .entitlement(),
            .flag("json", help: "Print the explanation as JSON instead of text."),
        ],
        details:
            "Exit status: 0 printed an explanation (whatever the outcome), 1 the capability is not declared or the "
            + "policy does not load, 2 bad usage or unreadable/invalid response."
    )

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        let capability = try arguments.requiredValue("capability")
        let (policy, response, context) = try arguments.evaluationInputs()
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
