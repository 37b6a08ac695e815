import ArgumentParsing
import Foundation
import GroupPolicyCodegen

/// The TypedCapabilities plugin's tool: `group-policy-codegen POLICY... --output FILE`.
///
/// Diagnostics go to standard error in the compiler's `file:line:col: error: message` form, which
/// SwiftPM and Xcode show with the build; exit 1 when the policies do not load or a name cannot
/// become a Swift constant. `group-policy generate-swift` is the same generator for people.
@main
enum GroupPolicyCodegenTool {
    static let spec = CommandSpec(
        "group-policy-codegen",
        summary: "Generate Swift constants for the TypedCapabilities build plugin.",
        options: [.init("output", value: "file", help: "Write the Swift file here.", required: true)],
        arguments: .init(["policy"], minimum: 1, maximum: nil, missingMessage: "give at least one POLICY file")
    )

    static func main() {
        let arguments: ParsedArguments
        do {
            switch try spec.parse(Array(CommandLine.arguments.dropFirst())) {
            case .help(let text):
                FileHandle.standardOutput.write(Data(text.utf8))
                return
            case .run(let parsed):
                arguments = parsed
            }
        } catch {
            printError(error.description)
            exit(2)
        }
        let output = arguments.value("output") ?? ""
        do {
            let generated = try SwiftConstantsGenerator().generate(policyFiles: arguments.positionals)
            for warning in generated.warnings { printError(warning) }
            try generated.write(to: output)
        } catch let failure as SwiftConstantsGenerator.Failure {
            for line in failure.diagnostics { printError(line) }
            exit(1)
        } catch {
            printError("error: cannot write \(output): \(error)")
            exit(1)
        }
    }

    static func printError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
