import GroupPolicy
import GroupPolicyTooling

/// The responses the page offers: `--response FILE` first, then every response file the
/// directory's policy tests name (for `Policies/`, the recorded responses of `Examples/`), then
/// Apple's sandbox placeholder answer.
enum PlaygroundResponses {
    struct Choice: Sendable {
        var name: String
        var text: String
    }

    /// The name the sandbox placeholder is offered under.
    static let sandboxPlaceholderName = "sandbox placeholder"

    /// The choices: `first`, then each response file once, read as `test` reads it
    /// (``PolicyWorkbench/responseFiles()``: a file refused or that cannot be read is left out, and
    /// its tests say why), then the sandbox placeholder.
    static func choices(workbench: PolicyWorkbench, first: Choice?) -> [Choice] {
        var choices = first.map { [$0] } ?? []
        var seen = Set(choices.map { PolicyWorkbench.tidied($0.name) })
        for file in workbench.responseFiles() where seen.insert(file.name).inserted {
            guard let text = file.text else { continue }
            choices.append(Choice(name: file.name, text: text))
        }
        choices.append(
            Choice(
                name: sandboxPlaceholderName,
                text: GetCustomerGroupsResponse.sandboxPlaceholder.jsonString(pretty: true)
            )
        )
        return choices
    }
}
