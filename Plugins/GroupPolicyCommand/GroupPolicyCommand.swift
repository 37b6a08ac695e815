import Foundation
import PackagePlugin

/// `swift package group-policy check|test|diff|eval …`: the `group-policy` command line, run in an
/// app's own package, with paths relative to the package's directory.
///
/// It runs the very same executable as `swift run group-policy` in this repository, so its output and
/// exit statuses are the CLI's. It asks for no permissions: checking, testing, diffing and
/// evaluating only read the files named. The commands that need more stay with the CLI itself:
/// `fetch` talks to Apple's servers and `generate-swift --output` writes into the package.
@main
struct GroupPolicyCommand: CommandPlugin {
    func performCommand(context: PluginContext, arguments: [String]) async throws {
        if let command = arguments.first, let reason = Self.unavailable[command] {
            throw GroupPolicyCommandError(
                message: "'group-policy \(command)' is not available as a package command (\(reason)); "
                    + "run the group-policy executable instead"
            )
        }
        let process = Process()
        process.executableURL = try context.tool(named: "group-policy").url
        process.arguments = arguments
        process.currentDirectoryURL = context.package.directoryURL
        try process.run()
        process.waitUntilExit()
        // The report is already on standard output and standard error; only the status is left.
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            exit(process.terminationReason == .exit ? process.terminationStatus : 2)
        }
    }

    /// Commands that would need a permission this plugin does not declare.
    static let unavailable = [
        "fetch": "it needs the network",
        "generate-swift": "it may write into the package; the TypedCapabilities build plugin generates the constants",
    ]
}

struct GroupPolicyCommandError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
