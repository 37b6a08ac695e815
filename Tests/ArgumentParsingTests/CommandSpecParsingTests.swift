import ArgumentParsing
import Testing

@Suite struct CommandSpecParsingTests {
    static let tool = CommandSpec(
        "tool",
        summary: "A tool.",
        subcommands: [
            CommandSpec(
                "run",
                summary: "Runs.",
                options: [
                    .init("name", value: "text", help: "A name.", required: true),
                    .init("tag", value: "t", help: "A tag.", repeatable: true),
                    .flag("fast", help: "Go fast."),
                ],
                arguments: .init(["file"], minimum: 0, maximum: nil, missingMessage: "")
            )
        ]
    )

    struct NotRun: Error {}

    func parsed(_ arguments: [String]) throws -> ParsedArguments {
        guard case .run(let parsed) = try Self.tool.parse(arguments) else { throw NotRun() }
        return parsed
    }

    @Test func optionsFlagsAndPositionalsInAnyOrder() throws {
        let parsed = try parsed(["run", "a", "--name=x", "--tag", "1", "-", "--fast", "--tag=2", "--", "--name", "-h"])
        #expect(parsed.commandPath == ["tool", "run"])
        #expect(parsed.value("name") == "x")
        #expect(parsed.all("tag") == ["1", "2"])
        #expect(parsed.has("fast"))
        #expect(parsed.positionals == ["a", "-", "--name", "-h"])
        #expect(parsed.usage == "tool run --name <text> [<file> ...] [options]")
    }

    @Test func anEmptyInlineValueIsAValue() throws {
        #expect(try parsed(["run", "--name="]).value("name") == "")
    }

    @Test func helpOfALeafListsOnlyItsOptions() throws {
        guard case .help(let text) = try Self.tool.parse(["run", "--name", "x", "-h"]) else {
            Issue.record("expected help")
            return
        }
        #expect(
            text == """
                Runs.

                Usage: tool run --name <text> [<file> ...] [options]

                Options:
                  --name <text>         A name.
                  --tag <t>             A tag.
                  --fast                Go fast.
                  -h, --help            Show this help.

                """
        )
    }

    @Test(arguments: [
        (["run"], "missing required option '--name <text>'"),
        (["run", "--name"], "missing value for '--name <text>'"),
        (["run", "--nam", "x"], "unknown option '--nam' (did you mean '--name'?)"),
        (["run", "--name", "x", "--fast=1"], "--fast takes no value"),
        (["run", "--name", "x", "--name", "y"], "--name given more than once"),
        (["run", "--name", "x", "--fast", "--fast"], "--fast given more than once"),
        (["ru"], "unknown subcommand 'ru' (did you mean 'run'?)"),
        (["--name"], "missing subcommand before '--name' (one of: run)"),
    ])
    func usageErrors(_ arguments: [String], _ message: String) throws {
        #expect(throws: UsageError.self) { try Self.tool.parse(arguments) }
        do {
            _ = try Self.tool.parse(arguments)
        } catch {
            #expect(error.message == message)
        }
    }

    @Test func aUsageErrorPrintsThreeLines() throws {
        let error = try #require(throws: UsageError.self) { try Self.tool.parse(["run", "--fast"]) }
        #expect(
            error.description == """
                Error: missing required option '--name <text>'
                Usage: tool run --name <text> [<file> ...] [options]
                  See 'tool run --help' for more information.
                """
        )
    }
}
