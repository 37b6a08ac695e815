/// Bad usage of a command: printed as swift-argument-parser tools do, and the tool exits 2.
///
/// ```
/// Error: missing required option '--transaction-id <id>'
/// Usage: group-policy fetch groups --transaction-id <id> [options]
///   See 'group-policy fetch groups --help' for more information.
/// ```
package struct UsageError: Error, Sendable, CustomStringConvertible {
    /// What is wrong, on one line.
    package var message: String
    /// The command's words from the tool's name on (`group-policy fetch groups`).
    package var commandPath: String
    /// The usage line of that command, without `Usage: `.
    package var usage: String

    /// The three lines for standard error, without a final newline.
    package var description: String {
        "Error: \(message.escapingControlCharacters)\nUsage: \(usage)\n  See '\(commandPath) --help' for more information."
    }
}
