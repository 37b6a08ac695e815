import Foundation

/// The `group-policy` entry point: dispatches to a subcommand, maps failures to exit statuses.
@main
enum GroupPolicyCommand {
    static var commands: [(spec: CommandSpec, run: (ParsedArguments) async throws(CommandFailure) -> Void)] {
        [
            (EvalCommand.spec, EvalCommand.run),
            (ExplainCommand.spec, ExplainCommand.run),
            (TestCommand.spec, TestCommand.run),
            (CheckCommand.spec, CheckCommand.run),
            (DiffCommand.spec, DiffCommand.run),
            (FetchCommand.spec, FetchCommand.run),
            (GenerateSwiftCommand.spec, GenerateSwiftCommand.run),
        ]
    }

    static var help: String {
        var text = "group-policy: check, test, evaluate and diff GroupPolicy policies; fetch App Store groups.\n\n"
        text += "Usage: group-policy COMMAND [OPTIONS]\n\nCommands:\n"
        for (spec, _) in commands { text += "  " + spec.name.padding(toLength: 16) + spec.summary + "\n" }
        text += "\nSee 'group-policy COMMAND --help' for a command's options."
        return text
    }

    static func main() async {
        exit(await run(Array(CommandLine.arguments.dropFirst())).rawValue)
    }

    static func run(_ arguments: [String]) async -> ExitStatus {
        guard let name = arguments.first else {
            Terminal.err(help)
            return .unusable
        }
        if name == "--help" || name == "-h" || name == "help" {
            Terminal.out(help)
            return .success
        }
        guard let command = commands.first(where: { $0.spec.name == name }) else {
            Terminal.error(
                "unknown command '\(name)' (commands: \(commands.map(\.spec.name).joined(separator: ", ")); see 'group-policy --help')"
            )
            return .unusable
        }
        let parsed: ParsedArguments
        do {
            parsed = try ParsedArguments.parse(Array(arguments.dropFirst()), for: command.spec)
        } catch {
            Terminal.error("\(error.message) (usage: \(command.spec.usage))")
            return .unusable
        }
        if parsed.wantsHelp {
            Terminal.out(command.spec.help)
            return .success
        }
        do {
            try await command.run(parsed)
            return .success
        } catch {
            if let message = error.message { Terminal.error(message) }
            return error.status
        }
    }
}
