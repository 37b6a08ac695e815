/// What a command was given: option values by name (in order), flags, and positional arguments.
package struct ParsedArguments: Sendable {
    /// The words that selected the command, from the tool's name on (`["group-policy", "fetch", "groups"]`).
    package var commandPath: [String]
    /// Each option's values, in the order given.
    package var values: [String: [String]] = [:]
    /// The flags given.
    package var flags: Set<String> = []
    /// The positional arguments, in order (`-` among them stands for standard input).
    package var positionals: [String] = []
    /// The command's usage line, for errors found after parsing.
    package var usage: String

    /// The option's value (the last one given), if any.
    package func value(_ name: String) -> String? { values[name]?.last }

    /// Every value of a repeatable option, in order.
    package func all(_ name: String) -> [String] { values[name] ?? [] }

    /// Whether the flag was given.
    package func has(_ name: String) -> Bool { flags.contains(name) }

    /// The value of a required option (the parser has already checked that it is there).
    package func required(_ name: String) throws(UsageError) -> String {
        guard let value = value(name) else { throw usageError("missing required option '--\(name)'") }
        return value
    }

    /// A usage error about this command, for checks of values the parser cannot make.
    package func usageError(_ message: String) -> UsageError {
        UsageError(message: message, commandPath: commandPath.joined(separator: " "), usage: usage)
    }
}
