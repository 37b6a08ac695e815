import ArgumentParsing
import GroupPolicy
import GroupPolicyTooling

enum EvalCommand {
    static let spec = CommandSpec(
        "eval",
        summary: "Evaluate a Get Customer Groups response against a policy and print the Decision JSON.",
        options: [
            .policyFile, .responseFile, .evaluationEnvironment, .entitlement(),
            .flag("explain", help: "Include grants and denials with provenance."),
        ],
        details:
            "Exit status: 0 printed a decision, 1 the policy does not load, 2 bad usage or unreadable/invalid response."
    )

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        let (policy, response, context) = try arguments.evaluationInputs()
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
    static let maximumProvenanceEntries = Policy.maximumShownProvenanceEntries
}
