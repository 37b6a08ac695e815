import GroupPolicy

enum ExplainCommand {
    static let spec = CommandSpec(
        name: "explain",
        synopsis:
            "--policy FILE --response FILE|- --capability NAME [--group ID] [--environment production|sandbox] "
            + "[--entitlement E]... [--json]",
        summary: "Explain why a capability is granted, denied or not granted in each group of a response.",
        options: [
            .init(name: "policy", valueName: "FILE", help: "The policy file (or a directory: a policy set)."),
            .init(name: "response", valueName: "FILE|-", help: "The response JSON; '-' reads standard input."),
            .init(name: "capability", valueName: "NAME", help: "The capability to explain."),
            .init(name: "group", valueName: "ID", help: "Explain only this group of the response."),
            .init(name: "environment", valueName: "ENV", help: "production (default) or sandbox."),
            .init(
                name: "entitlement",
                valueName: "E",
                help: "An entitlement from verified transactions (repeatable).",
                repeatable: true
            ),
            .init(name: "json", help: "Print the explanation as JSON instead of text."),
        ],
        details:
            "Exit status: 0 printed an explanation (whatever the outcome), 1 the capability is not declared or the "
            + "policy does not load, 2 bad usage or unreadable/invalid response."
    )

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        guard arguments.positionals.isEmpty else {
            throw CommandFailure(
                .unusable,
                "unexpected argument '\(arguments.positionals[0])' (use --policy, --response and --capability)"
            )
        }
        let policyPath: String
        let responsePath: String
        let capability: String
        let environment: StoreEnvironment
        do {
            policyPath = try arguments.required("policy")
            responsePath = try arguments.required("response")
            capability = try arguments.required("capability")
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
        let explanation: Explanation
        do {
            explanation = try policy.explain(
                Capability(capability),
                for: response,
                in: context,
                group: arguments.value("group")
            )
        } catch {
            throw CommandFailure(error.code == .undeclaredCapability ? .failure : .unusable, error.message)
        }
        Terminal.out(arguments.has("json") ? explanation.jsonString() : explanation.text)
    }
}
