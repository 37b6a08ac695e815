import Testing

/// Every command's `--help` shows its own options only; parse errors read as swift-argument-parser
/// tools' do (an `Error:` line, the usage, where to find help) and exit 2.
@Suite struct HelpAndUsageTests {
    struct HelpCase: Sendable, CustomTestStringConvertible {
        var command: [String]
        var firstLine: String
        var options: [String]
        var absent: [String] = []
        var testDescription: String { command.joined(separator: " ") }
    }

    static let connection = [
        "--key-id", "--issuer-id", "--bundle-id", "--private-key", "--environment", "--base-url", "--timeout",
    ]

    static let helpCases: [HelpCase] = [
        HelpCase(
            command: [],
            firstLine:
                "group-policy: check, test, evaluate, explain and diff GroupPolicy policies; fetch App Store groups.",
            options: ["eval", "explain", "test", "check", "diff", "fetch", "generate-swift", "shadow", "playground"]
        ),
        HelpCase(
            command: ["eval"],
            firstLine: "Evaluate a Get Customer Groups response against a policy and print the Decision JSON.",
            options: ["--policy", "--response", "--environment", "--entitlement", "--explain", "--help"]
        ),
        HelpCase(
            command: ["explain"],
            firstLine: "Explain why a capability is granted, denied or not granted in each group of a response.",
            options: [
                "--policy", "--response", "--capability", "--group", "--environment", "--entitlement", "--json",
                "--help",
            ],
            absent: ["--explain"]
        ),
        HelpCase(
            command: ["test"],
            firstLine: "Run every policy test file (*.tests.json) under the paths.",
            options: ["--coverage", "--help"]
        ),
        HelpCase(
            command: ["check"],
            firstLine: "Check policies and test files under the paths: diagnostics with locations, and invariants.",
            options: ["--strict", "--verbose", "--invariant-budget", "--help"]
        ),
        HelpCase(
            command: ["diff"],
            firstLine: "Show the capability changes between two versions of a policy over every scenario.",
            options: ["--json", "--budget", "--help"]
        ),
        HelpCase(
            command: ["fetch"],
            firstLine: "Fetch a customer's groups or a group's members from Apple's App Store Server API.",
            options: ["groups", "members"],
            absent: ["--transaction-id", "--group-id"]
        ),
        HelpCase(
            command: ["fetch", "groups"],
            firstLine: "Get Customer Groups: print the response JSON, or with --policy the Decision.",
            options: ["--transaction-id", "--policy", "--entitlement", "--explain", "--help"] + connection,
            absent: ["--group-id", "--limit", "--all"]
        ),
        HelpCase(
            command: ["fetch", "members"],
            firstLine: "Get Group Members: print a page of members, or with --all every member.",
            options: ["--group-id", "--limit", "--all", "--help"] + connection,
            absent: ["--transaction-id", "--policy", "--explain"]
        ),
        HelpCase(
            command: ["generate-swift"],
            firstLine: "Generate Swift constants for the capabilities and workspaces the policies declare.",
            options: ["--output", "--access-level", "--help"]
        ),
        HelpCase(
            command: ["shadow"],
            firstLine: "Show what a candidate policy would change, from a decision service's shadow report.",
            options: ["--json", "--limit", "--help"]
        ),
        HelpCase(
            command: ["playground"],
            firstLine:
                "Serve a page on 127.0.0.1 to edit, check, evaluate, explain and test the policies of a directory.",
            options: ["--port", "--response", "--help"]
        ),
    ]

    @Test(arguments: helpCases)
    func everyCommandHasItsOwnHelp(_ help: HelpCase) async throws {
        for flag in ["--help", "-h"] {
            let output = try await CLIRunner.run(help.command + [flag])
            #expect(output.status == 0)
            #expect(output.stderr == "")
            let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.first.map(String.init) == help.firstLine)
            let words = Set(output.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "," }))
            for option in help.options {
                #expect(words.contains(Substring(option)), "\(help.command) --help lacks \(option)")
            }
            for option in help.absent {
                #expect(!words.contains(Substring(option)), "\(help.command) --help shows \(option)")
            }
        }
    }

    @Test func helpWinsOverOtherArgumentsAndUsageLinesAreExact() async throws {
        let output = try await CLIRunner.run(["fetch", "groups", "--limit", "3", "--help"])
        #expect(output.status == 0)
        #expect(output.stdout.contains("\nUsage: group-policy fetch groups --transaction-id <id> [options]\n"))
    }

    @Test(arguments: [
        (
            ["fetch", "groups", "--transaction-idd", "1"],
            """
            Error: unknown option '--transaction-idd' (did you mean '--transaction-id'?)
            Usage: group-policy fetch groups --transaction-id <id> [options]
              See 'group-policy fetch groups --help' for more information.

            """
        ),
        (
            ["fetch", "members", "--group-id"],
            """
            Error: missing value for '--group-id <id>'
            Usage: group-policy fetch members --group-id <id> [options]
              See 'group-policy fetch members --help' for more information.

            """
        ),
        (
            ["fetch", "members", "--all"],
            """
            Error: missing required option '--group-id <id>'
            Usage: group-policy fetch members --group-id <id> [options]
              See 'group-policy fetch members --help' for more information.

            """
        ),
        (
            ["fetch", "member"],
            """
            Error: unknown subcommand 'member' (did you mean 'members'?)
            Usage: group-policy fetch <subcommand>
              See 'group-policy fetch --help' for more information.

            """
        ),
        (
            [],
            """
            Error: missing subcommand (one of: eval, explain, test, check, diff, fetch, generate-swift, shadow, playground)
            Usage: group-policy <subcommand>
              See 'group-policy --help' for more information.

            """
        ),
        (
            ["check", "--strict=yes", "Policies"],
            """
            Error: --strict takes no value
            Usage: group-policy check <path> ... [options]
              See 'group-policy check --help' for more information.

            """
        ),
        (
            ["diff", "--budget", "5", "--budget=6", "a.json", "b.json"],
            """
            Error: --budget given more than once
            Usage: group-policy diff <old> <new> [options]
              See 'group-policy diff --help' for more information.

            """
        ),
        (
            ["eval", "-p", "x"],
            """
            Error: unknown option '-p' (options are spelt --name)
            Usage: group-policy eval --policy <file> --response <file> [options]
              See 'group-policy eval --help' for more information.

            """
        ),
    ])
    func parseErrorsShowTheUsageAndExitTwo(_ arguments: [String], _ expected: String) async throws {
        let output = try await CLIRunner.run(arguments)
        #expect(output.status == 2)
        #expect(output.stdout == "")
        #expect(output.stderr == expected)
    }

    @Test func afterTwoDashesEverythingIsAPositional() async throws {
        let output = try await CLIRunner.run(["check", "--", "--strict"])
        #expect(output.status == 2)
        #expect(output.stderr == "Error: cannot read --strict: no such file or directory\n")
    }
}
