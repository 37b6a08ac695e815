import ArgumentParsing
import GroupPolicy
import GroupPolicyTooling

enum TestCommand {
    static let spec = CommandSpec(
        "test",
        summary: "Run every policy test file (*.tests.json) under the paths.",
        options: [
            .flag("coverage", help: "Also list, per policy, the rules and workspaces no case exercised.")
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
        let files: [String]
        // Bounds what the whole command reads, and keeps the policy consecutive test files name.
        let loader = PolicyLoader()
        do {
            files = try PolicyTestSuite.testFiles(under: arguments.positionals)
            try loader.charge(files)
        } catch {
            throw CommandFailure(.unusable, error.message)
        }
        var passed = 0
        var failed = 0
        // Per tested policy, in order of first appearance, across the test files that test it.
        var coverages: [PolicyCoverage] = []
        for file in files {
            let suite: PolicyTestSuite
            do {
                suite = try PolicyTestSuite(contentsOfFile: file, loader: loader)
            } catch {
                failed += 1
                Terminal.out("FAIL \(file): the test file does not load".escapingControlCharacters)
                for diagnostic in error.diagnostics where diagnostic.severity == .error {
                    Terminal.err(diagnostic.description)
                }
                if error.diagnostics.isEmpty { Terminal.err(error.description) }
                continue
            }
            let results = suite.run()
            if arguments.has("coverage") { PolicyCoverage.merge(results, of: suite, into: &coverages) }
            for result in results {
                if result.passed {
                    passed += 1
                    continue
                }
                failed += 1
                let place = result.location.map { "\($0)" } ?? file
                Terminal.out("FAIL \(place): \(result.name)".escapingControlCharacters)
                for failure in result.failures { Terminal.out("  \(failure)".escapingControlCharacters) }
            }
        }
        if files.isEmpty {
            Terminal.err(
                "no test files (*.tests.json) under \(arguments.positionals.joined(separator: " "))"
                    .escapingControlCharacters
            )
        }
        for coverage in coverages { Terminal.out(report(coverage)) }
        Terminal.out("\(passed) passed, \(failed) failed")
        if failed > 0 || files.isEmpty { throw CommandFailure(.failure) }
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
