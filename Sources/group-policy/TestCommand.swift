import ArgumentParsing
import GroupPolicy
import GroupPolicyBasics
import GroupPolicyTooling

enum TestCommand {
    static let spec = CommandSpec(
        "test",
        summary: "Run every policy test file (*.tests.json) under the paths.",
        options: [
            .flag("coverage", help: "Also list, per policy, the rules and workspaces no case exercised."),
            .allowOutside,
        ],
        arguments: .init(
            ["path"],
            minimum: 1,
            maximum: nil,
            missingMessage: "give at least one PATH (a test file or a directory)"
        ),
        details: """
            Prints each failing case with expected vs actual; the last line is 'N passed, N failed'.
            With --coverage, a rule counts as exercised when a case's decision lists it among its grants or
            denials, a workspace when a decision lists a membership in it.
            A test file that does not load counts as one failed case.
            Exit status: 0 all passed, 1 a case failed (or no test file was found), 2 bad usage or unreadable path.
            """
    )

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        let runner = PolicyTestRunner(
            coverage: arguments.has("coverage"),
            allowsResponseFilesOutside: arguments.has("allow-outside")
        )
        let outcome: PolicyTestReport
        do {
            outcome = try runner.run(paths: arguments.positionals) { file in print(file) }
        } catch {
            throw CommandFailure(.unusable, error.message)
        }
        if outcome.testFileCount == 0 {
            Terminal.err(
                "no test files (*.tests.json) under \(arguments.positionals.joined(separator: " "))"
                    .escapingControlCharacters
            )
        }
        for coverage in outcome.coverage { Terminal.out(report(coverage)) }
        Terminal.out("\(outcome.passed) passed, \(outcome.failed) failed")
        if !outcome.succeeded { throw CommandFailure(.failure) }
    }

    /// Each failing case of a file, with each way it failed; a file that does not load, with its
    /// errors on standard error.
    private static func print(_ file: PolicyTestReport.File) {
        if let error = file.error {
            Terminal.out("FAIL \(file.path): the test file does not load".escapingControlCharacters)
            for diagnostic in error.diagnostics where diagnostic.severity == .error {
                Terminal.err(diagnostic.description)
            }
            if error.diagnostics.isEmpty { Terminal.err(error.description) }
            return
        }
        for result in file.results where !result.passed {
            let place = result.location.map { "\($0)" } ?? file.path
            Terminal.out("FAIL \(place): \(result.name)".escapingControlCharacters)
            for failure in result.failures { Terminal.out("  \(failure)".escapingControlCharacters) }
        }
    }

    /// `coverage of FILE: R of N rules, W of M workspaces exercised`, then one line per definition
    /// no case exercised, at its location.
    private static func report(_ coverage: PolicyCoverage) -> String {
        let rules = coverage.rules.count - coverage.unexercisedRules.count
        let workspaces = coverage.workspaces.count - coverage.unexercisedWorkspaces.count
        var lines = [
            "coverage of \(coverage.policyPath): \(rules) of \(counted(coverage.rules.count, "rule")), "
                + "\(workspaces) of \(counted(coverage.workspaces.count, "workspace")) exercised"
        ]
        for (kind, items) in [("rule", coverage.unexercisedRules), ("workspace", coverage.unexercisedWorkspaces)] {
            for item in items {
                let place = item.location.map { "\($0): " } ?? ""
                lines.append("  \(place)\(item.jsonPath): \(kind) '\(item.id)' was not exercised by any case")
            }
        }
        return lines.map(\.escapingControlCharacters).joined(separator: "\n")
    }
}
