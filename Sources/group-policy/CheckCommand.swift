import ArgumentParsing
import GroupPolicy
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
            counterexample for each violated one as a test case. The last line on stdout sums it up.
            Exit status: 0 no error, 1 an error (with --strict, a warning too), a violated invariant or one
            over the budget, 2 bad usage or an unreadable path.
            """
    )

    /// What was found, for the summary line.
    private struct Tally {
        var policies = 0
        var testFiles = 0
        var errors = 0
        var warnings = 0
        var invariants = 0
        var invariantsHolding = 0
        var unreadable = false
    }

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        var budget = Policy.defaultInvariantBudget
        if let text = arguments.value("invariant-budget") {
            guard let value = Int(text), value > 0 else {
                throw arguments.usage("--invariant-budget needs a positive number of scenarios, not '\(text)'")
            }
            budget = value
        }
        let strict = arguments.has("strict")
        let policyFiles: [String]
        let testFiles: [String]
        do {
            (policyFiles, testFiles) = try PolicyFiles.find(under: arguments.positionals)
        } catch {
            throw CommandFailure(.unusable, error.message)
        }

        var tally = Tally()
        func report(_ diagnostic: Diagnostic) {
            var diagnostic = diagnostic
            if strict { diagnostic.severity = .error }
            if diagnostic.severity == .error { tally.errors += 1 } else { tally.warnings += 1 }
            Terminal.err(diagnostic.description)
        }
        func report(_ error: GroupPolicyError) {
            if error.code == .unreadableFile {
                tally.unreadable = true
                Terminal.error(error.message)
            } else if error.diagnostics.isEmpty {
                tally.errors += 1
                Terminal.err(error.description)
            } else {
                error.diagnostics.forEach(report)
            }
        }

        for file in policyFiles {
            tally.policies += 1
            let policy: Policy
            do {
                policy = try Policy(contentsOfFile: file)
            } catch let error as GroupPolicyError {
                report(error)
                continue
            } catch {
                tally.errors += 1
                Terminal.err("\(file): error: $: \(error)")
                continue
            }
            policy.warnings.forEach(report)
            for result in policy.checkInvariants(budget: budget) {
                tally.invariants += 1
                guard let diagnostic = result.diagnostic else {
                    tally.invariantsHolding += 1
                    if arguments.has("verbose") {
                        let place = result.location.map { "\($0): " } ?? ""
                        Terminal.out(
                            "\(place)\(result.jsonPath): invariant '\(result.invariantID)' holds "
                                + "(\(counted(result.scenarioCount, "scenario")) checked)"
                        )
                    }
                    continue
                }
                report(diagnostic)
                if let testCase = result.counterexampleTestCase {
                    Terminal.err("  counterexample, as a test case that fails until the policy is fixed:")
                    Terminal.err(testCase.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
                } else if result.status == .overBudget {
                    Terminal.err("  raise --invariant-budget, or narrow the invariant's match or requires")
                }
            }
        }
        for file in testFiles {
            tally.testFiles += 1
            do {
                _ = try PolicyTestSuite(contentsOfFile: file)
            } catch let error as GroupPolicyError {
                report(error)
            } catch {
                tally.errors += 1
                Terminal.err("\(file): error: $: \(error)")
            }
        }

        if policyFiles.isEmpty && testFiles.isEmpty {
            Terminal.err("no policy or test files under \(arguments.positionals.joined(separator: " "))")
            tally.errors += 1
        }
        Terminal.out(summary(tally))
        // The revision a server loading these files as one set reports in its decisions.
        if tally.errors == 0, !tally.unreadable, !policyFiles.isEmpty,
            let revision = try? Policy.revision(ofFiles: policyFiles)
        {
            Terminal.out("policy revision \(revision)")
        }
        if tally.unreadable { throw CommandFailure(.unusable) }
        if tally.errors > 0 { throw CommandFailure(.failure) }
    }

    private static func summary(_ tally: Tally) -> String {
        let invariants =
            tally.invariantsHolding == tally.invariants
            ? counted(tally.invariants, "invariant") + (tally.invariants == 1 ? " holds" : " hold")
            : "\(tally.invariantsHolding) of " + counted(tally.invariants, "invariant") + " hold"
        return "checked \(counted(tally.policies, "policy", "policies")), \(counted(tally.testFiles, "test file")): "
            + "\(counted(tally.errors, "error")), \(counted(tally.warnings, "warning")), \(invariants)"
    }
}

/// `1 policy`, `2 policies`.
func counted(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
}
