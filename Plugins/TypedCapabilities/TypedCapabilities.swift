import PackagePlugin

/// Generates Swift constants for the capabilities and workspaces declared by the policy files in
/// a target, so that `decision.allows(.workspaceManageSeats)` compiles and a misspelt name does not.
///
/// The policy files are every `*.json` file in the target's directory, at any depth, except
/// `*.tests.json` and `*.schema.json`; together they form one policy set. A policy that does not
/// load fails the build with the loader's `file:line:col: error: …` diagnostics.
@main
struct TypedCapabilities: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
        guard let target = target as? SourceModuleTarget else { return [] }
        let policies = target.sourceFiles
            .map(\.url)
            .filter { isPolicyFileName($0.lastPathComponent) }
            .sorted { $0.path < $1.path }
        guard !policies.isEmpty else {
            throw TypedCapabilitiesError(
                message: """
                    TypedCapabilities: target '\(target.name)' has no policy files; put its *.json policy \
                    files in \(target.directoryURL.path), or remove the plugin from the target
                    """
            )
        }
        let output = context.pluginWorkDirectoryURL.appending(path: "GroupPolicyConstants.swift")
        return [
            .buildCommand(
                displayName: "Generating capability and workspace constants for \(target.name)",
                executable: try context.tool(named: "group-policy-codegen").url,
                arguments: policies.map(\.path) + ["--output", output.path],
                inputFiles: policies,
                outputFiles: [output]
            )
        ]
    }
}

/// The engine's rule for a policy set's files: `*.json` except tests and schemas.
///
/// A plugin cannot link the library, so this mirrors `PolicyFiles.isPolicyFileName` in the
/// `GroupPolicy` module; change both together.
func isPolicyFileName(_ name: String) -> Bool {
    name.hasSuffix(".json") && !name.hasSuffix(".tests.json") && !name.hasSuffix(".schema.json")
}

struct TypedCapabilitiesError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
