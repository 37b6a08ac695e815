import ArgumentParsing
import Foundation

/// The `group-policy` entry point: parses the command line against the tree of commands, runs the
/// one it selects, maps failures to exit statuses.
@main
enum GroupPolicyCommand {
    typealias Run = @Sendable (ParsedArguments) async throws(CommandFailure) -> Void

    static let spec = CommandSpec(
        "group-policy",
        summary: "group-policy: check, test, evaluate, explain and diff GroupPolicy policies; fetch App Store groups.",
        subcommands: [
            EvalCommand.spec, ExplainCommand.spec, TestCommand.spec, CheckCommand.spec, DiffCommand.spec,
            FetchCommand.spec, GenerateSwiftCommand.spec, ShadowCommand.spec, PlaygroundCommand.spec,
        ]
    )

    /// What runs each command, by its words after `group-policy`.
    static let commands: [String: Run] = [
        "eval": { arguments throws(CommandFailure) in try EvalCommand.run(arguments) },
        "explain": { arguments throws(CommandFailure) in try ExplainCommand.run(arguments) },
        "test": { arguments throws(CommandFailure) in try TestCommand.run(arguments) },
        "check": { arguments throws(CommandFailure) in try CheckCommand.run(arguments) },
        "diff": { arguments throws(CommandFailure) in try DiffCommand.run(arguments) },
        "fetch groups": { arguments throws(CommandFailure) in try await FetchCommand.fetchGroups(arguments) },
        "fetch members": { arguments throws(CommandFailure) in try await FetchCommand.fetchMembers(arguments) },
        "generate-swift": { arguments throws(CommandFailure) in try GenerateSwiftCommand.run(arguments) },
        "shadow": { arguments throws(CommandFailure) in try ShadowCommand.run(arguments) },
        "playground": { arguments throws(CommandFailure) in try PlaygroundCommand.run(arguments) },
    ]

    static func main() async {
        exit(await run(Array(CommandLine.arguments.dropFirst())).rawValue)
    }

    static func run(_ arguments: [String]) async -> ExitStatus {
        let parsed: ParsedArguments
        do {
            switch try spec.parse(arguments) {
            case .help(let text):
                FileHandle.standardOutput.write(Data(text.utf8))
                return .success
            case .run(let arguments):
                parsed = arguments
            }
        } catch {
            Terminal.err(error.description)
            return .unusable
        }
        guard let command = commands[parsed.commandPath.dropFirst().joined(separator: " ")] else {
            Terminal.error("no implementation for '\(parsed.commandPath.joined(separator: " "))'")
            return .unusable
        }
        do {
            try await command(parsed)
            return .success
        } catch {
            if let usageError = error.usageError {
                Terminal.err(usageError.description)
            } else if let message = error.message {
                Terminal.error(message)
            }
            return error.status
        }
    }
}
