import ArgumentParsing
import GroupPolicy
import GroupPolicyTooling

enum DiffCommand {
    static let spec = CommandSpec(
        "diff",
        summary: "Show the capability changes between two versions of a policy over every scenario.",
        options: [
            .flag("json", help: "Print JSON for machines instead of a table."),
            .init("budget", value: "n", help: "Most scenarios to compare (default \(PolicyDiff.defaultBudget))."),
        ],
        arguments: .init(
            ["old", "new"],
            minimum: 2,
            maximum: 2,
            missingMessage: "give exactly two policies, OLD and NEW"
        ),
        details: """
            OLD and NEW are policy files (or directories: policy sets). Each row is a minimal class of scenarios
            (one group, its role entries, the environment and entitlements) in which a capability is added (+)
            or removed (-); '*' is any value. No rows means both versions give every group the same capabilities.
            Exit status: 0 compared (whatever the changes), 1 a policy does not load, 2 bad usage, an unreadable
            path or a space over the budget.
            """
    )

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        let budget = try arguments.positiveNumber("budget", of: "scenarios", default: PolicyDiff.defaultBudget)
        let old = try loadPolicy(arguments.positionals[0])
        let new = try loadPolicy(arguments.positionals[1])
        let diff: PolicyDiff
        do {
            diff = try PolicyDiff(from: old, to: new, budget: budget)
        } catch {
            // Only the scenario budget can be raised; the work and change limits are fixed.
            throw CommandFailure(.unusable, error.message + (error.code == .overBudget ? " (raise --budget)" : ""))
        }
        Terminal.out(arguments.has("json") ? diff.jsonString() : diff.table)
    }
}
