import GroupPolicy

enum TestCommand {
    static let spec = CommandSpec(
        name: "test",
        synopsis: "PATH... [--coverage]",
        summary: "Run every policy test file (*.tests.json) under the paths.",
        options: [],
        positionalName: "PATH",
        details: """
            Prints each failing case with expected vs actual; the last line is 'N passed, N failed'.
            A test file that does not load counts as one failed case.
            Exit status: 0 all passed, 1 a case failed (or no test file was found), 2 bad usage or unreadable path.
            """
    )

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        guard !arguments.positionals.isEmpty else {
            throw CommandFailure(.unusable, "give at least one PATH (a test file or a directory)")
        }
        let files: [String]
        do {
            files = try PolicyTestSuite.testFiles(under: arguments.positionals)
        } catch {
            throw CommandFailure(.unusable, error.message)
        }
        var passed = 0
        var failed = 0
        for file in files {
            let suite: PolicyTestSuite
            do {
                suite = try PolicyTestSuite(contentsOfFile: file)
            } catch let error as GroupPolicyError {
                failed += 1
                Terminal.out("FAIL \(file): the test file does not load")
                for diagnostic in error.diagnostics where diagnostic.severity == .error {
                    Terminal.err(diagnostic.description)
                }
                if error.diagnostics.isEmpty { Terminal.err(error.description) }
                continue
            } catch {
                failed += 1
                Terminal.out("FAIL \(file): \(error)")
                continue
            }
            for result in suite.run() {
                if result.passed {
                    passed += 1
                    continue
                }
                failed += 1
                let place = result.location.map { "\($0)" } ?? file
                Terminal.out("FAIL \(place): \(result.name)")
                for failure in result.failures { Terminal.out("  \(failure)") }
            }
        }
        if files.isEmpty {
            Terminal.err("no test files (*.tests.json) under \(arguments.positionals.joined(separator: " "))")
        }
        Terminal.out("\(passed) passed, \(failed) failed")
        if failed > 0 || files.isEmpty { throw CommandFailure(.failure) }
    }
}
