import ArgumentParsing
import Foundation
import GroupPolicy
import GroupPolicyCodegen

enum GenerateSwiftCommand {
    static let spec = CommandSpec(
        "generate-swift",
        summary: "Generate Swift constants for the capabilities and workspaces the policies declare.",
        options: [
            .init("output", value: "file", help: "Write the Swift file here (default: standard output)."),
            .init("access-level", value: "level", help: "public (default), package or internal."),
        ],
        arguments: .init(
            ["policy"],
            minimum: 1,
            maximum: nil,
            missingMessage: "give at least one POLICY (a policy file or a directory)"
        ),
        details: """
            The policies are loaded as one policy set; a directory stands for the *.json files directly in it
            (not *.tests.json or *.schema.json), as 'eval --policy' reads it. The constants are those the
            TypedCapabilities build plugin generates: 'workspace.manage-seats' becomes
            'Capability.workspaceManageSeats'. The output file is rewritten only when its content changes.
            Exit status: 0 generated, 1 a policy does not load or a name cannot be a Swift constant,
            2 bad usage or an unreadable path.
            """
    )

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        let level = arguments.value("access-level") ?? "public"
        guard let accessLevel = SwiftConstantsGenerator.AccessLevel(rawValue: level) else {
            throw arguments.usage("unknown access level '\(level)' (use public, package or internal)")
        }
        var files: [String] = []
        do {
            for path in arguments.positionals { files += try PolicyFiles.policyFiles(at: path) }
        } catch {
            throw CommandFailure(.unusable, error.message)
        }
        let output: SwiftConstantsGenerator.Output
        do {
            output = try SwiftConstantsGenerator(accessLevel: accessLevel).generate(policyFiles: files)
        } catch {
            for line in error.diagnostics { Terminal.err(line) }
            throw CommandFailure(.failure, "no Swift constants generated")
        }
        for warning in output.warnings { Terminal.err(warning) }
        guard let path = arguments.value("output") else {
            FileHandle.standardOutput.write(Data(output.source.utf8))
            return
        }
        do {
            try output.write(to: path)
        } catch let error as SwiftConstantsGenerator.OutputPathError {
            throw CommandFailure(.unusable, error.description)
        } catch {
            throw CommandFailure(.unusable, "cannot write \(path): \(error.localizedDescription)")
        }
    }
}
