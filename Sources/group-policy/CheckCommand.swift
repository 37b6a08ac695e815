import ArgumentParsing
import GroupPolicy
import GroupPolicyBasics
import GroupPolicyTooling

enum CheckCommand {
    static let spec = CommandSpec(
        "check",
        summary: "Check policies and test files under the paths: diagnostics with locations, and invariants.",
        options: [
            .flag("strict", help: "Treat warnings as errors."),
            .flag("verbose", help: "Also print each invariant that holds, with its number of scenarios."),
            .init(
                "invariant-budget",
                value: "n",
                help: "Most scenarios one invariant may need (default \(Policy.defaultInvariantBudget))."
            ),
            .allowOutside,
        ],
        arguments: .init(
            ["path"],
            minimum: 1,
            maximum: nil,
            missingMessage: "give at least one PATH (a policy, a test file or a directory)"
        ),
        details: """
            Loads every policy (*.json that is not *.tests.json or *.schema.json) under the paths, each on its
            own, and every test file (*.tests.json), which loads its policy. Prints each diagnostic on stderr as
            'file:line:col: error|warning: json.path: message', checks every invariant exhaustively, and prints a
            counterexample for each violated one as a test case. It warns about each rule whose removal changes no
            decision and each capability no scenario receives (exact over the scenario space; a space over the
            budget is not analysed, and a note says so). The last line on stdout sums it up.
            Exit status: 0 no error, 1 an error (with --strict, a warning too), a violated invariant or one
            over the budget, 2 bad usage or an unreadable path.
            """
    )

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        let budget = try arguments.positiveNumber(
            "invariant-budget",
            of: "scenarios",
            default: Policy.defaultInvariantBudget
        )
        let check = PolicyCheck(
            invariantBudget: budget,
            strict: arguments.has("strict"),
            allowsResponseFilesOutside: arguments.has("allow-outside")
        )
        let report: PolicyCheckReport
        do {
            report = try check.run(paths: arguments.positionals)
        } catch {
            throw CommandFailure(.unusable, error.message)
        }

        for file in report.files {
            if let error = file.error {
                if error.code == .unreadableFile {
                    Terminal.error(error.message)
                } else {
                    Terminal.err(error.description)
                }
            }
            for diagnostic in file.diagnostics { Terminal.err(diagnostic.description) }
            for result in file.invariants {
                guard let diagnostic = check.diagnostic(for: result) else {
                    if arguments.has("verbose") {
                        let place = result.location.map { "\($0): " } ?? ""
                        let line =
                            "\(place)\(result.jsonPath): invariant '\(result.invariantID)' holds "
                            + "(\(counted(result.scenarioCount, "scenario")) checked)"
                        Terminal.out(line.escapingControlCharacters)
                    }
                    continue
                }
                Terminal.err(diagnostic.description)
                if let testCase = result.counterexampleTestCase {
                    Terminal.err("  counterexample, as a test case that fails until the policy is fixed:")
                    Terminal.err(testCase.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
                } else if result.status == .overBudget, result.workLimit == nil {
                    Terminal.err("  raise --invariant-budget, or narrow the invariant's match or requires")
                } else if result.status == .overBudget {
                    Terminal.err("  narrow the invariant's match or requires, or the rules naming its capabilities")
                }
            }
            if let skipped = file.ruleAnalysisSkipped {
                let line = "\(file.path): note: its rules were not analysed for redundancy: \(skipped)"
                Terminal.err(line.escapingControlCharacters)
            }
        }

        if report.files.isEmpty {
            Terminal.err(
                "no policy or test files under \(arguments.positionals.joined(separator: " "))"
                    .escapingControlCharacters
            )
        }
        Terminal.out(summary(report.summary))
        if let revision = report.policyRevision {
            Terminal.out("policy revision \(revision)")
        }
        if report.summary.unreadable { throw CommandFailure(.unusable) }
        if report.summary.errors > 0 { throw CommandFailure(.failure) }
    }

    private static func summary(_ tally: PolicyCheckReport.Summary) -> String {
        let invariants =
            tally.invariantsHolding == tally.invariants
            ? counted(tally.invariants, "invariant") + (tally.invariants == 1 ? " holds" : " hold")
            : "\(tally.invariantsHolding) of " + counted(tally.invariants, "invariant") + " hold"
        return "checked \(counted(tally.policies, "policy", "policies")), \(counted(tally.testFiles, "test file")): "
            + "\(counted(tally.errors, "error")), \(counted(tally.warnings, "warning")), \(invariants)"
    }
}
