import Foundation
import PackagePlugin

/// `swift package group-policy check|test|diff|eval …`: the `group-policy` command line, run in an
/// app's own package, with paths relative to the package's directory.
///
/// It runs the very same executable as `swift run group-policy` in this repository, so its output and
/// exit statuses are the CLI's. It asks for no permissions: checking, testing, diffing and
/// evaluating only read the files named. The commands that need more stay with the CLI itself:
/// `fetch` talks to Apple's servers and `generate-swift --output` writes into the package.
/// `playground` is offered, as an author runs it by hand: it listens on 127.0.0.1 and may save a
/// policy file, which the plugin sandbox of macOS forbids, so there it needs
/// `swift package --disable-sandbox group-policy playground` (declaring the permissions instead
/// would make every command ask for them).
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
        // The tool runs in a process group of its own, so Control-C (and SwiftPM stopping the
        // plugin) reaches only this process: pass it on, or a playground would keep serving.
        let stops = Self.forwardStops(to: process.processIdentifier)
        process.waitUntilExit()
        withExtendedLifetime(stops) {}
        // The report is already on standard output and standard error; only the status is left.
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            exit(process.terminationReason == .exit ? process.terminationStatus : 2)
        }
    }

    /// Sends `SIGTERM` to the tool when this process gets `SIGINT` or `SIGTERM`; the sources must
    /// be kept while the tool runs.
    private static func forwardStops(to tool: Int32) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { stop in
            signal(stop, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: stop, queue: .global())
            source.setEventHandler { kill(tool, SIGTERM) }
            source.resume()
            return source
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
