import Foundation
import GroupPolicyCodegen

/// The TypedCapabilities plugin's tool: `group-policy-codegen POLICY... --output FILE`.
///
/// Diagnostics go to standard error in the compiler's `file:line:col: error: message` form, which
/// SwiftPM and Xcode show with the build; exit 1 when the policies do not load or a name cannot
/// become a Swift constant. `group-policy generate-swift` is the same generator for people.
@main
enum GroupPolicyCodegenTool {
    static func main() {
        var files: [String] = []
        var output: String?
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            if argument == "--output" {
                output = arguments.popFirst()
            } else {
                files.append(argument)
            }
        }
        guard let output, !files.isEmpty else {
            printError("usage: group-policy-codegen POLICY... --output FILE")
            exit(2)
        }
        do {
            let generated = try SwiftConstantsGenerator().generate(policyFiles: files)
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
