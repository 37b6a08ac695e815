import GroupPolicyBasics

/// What the command line asks for: run a command, or print a command's help.
package enum ParseOutcome: Sendable {
    /// Run the command these arguments select.
    case run(ParsedArguments)
    /// Print this help on standard output and exit 0.
    case help(String)
}

extension CommandSpec {
    /// Parses a tool's arguments (without the tool's name) against this root command.
    ///
    /// Words select subcommands until a command without subcommands; its arguments may be
    /// `--name value`, `--name=value`, flags, positionals, `-` (standard input, a positional) and
    /// `--` (everything after it is positional). `--help` or `-h` anywhere before `--` asks for that
    /// command's help.
    package func parse(_ arguments: [String]) throws(UsageError) -> ParseOutcome {
        var command = self
        var path = [name]
        var rest = arguments[...]
        while !command.subcommands.isEmpty {
            let names = command.subcommands.map(\.name)
            guard let word = rest.popFirst() else {
                throw command.error(
                    "missing subcommand (one of: \(names.joined(separator: ", ")))",
                    path: path
                )
            }
            if word == "--help" || word == "-h" || word == "help" {
                return .help(command.help(path: path))
            }
            if word.hasPrefix("-") {
                throw command.error(
                    "missing subcommand before '\(word)' (one of: \(names.joined(separator: ", ")))",
                    path: path
                )
            }
            guard let subcommand = command.subcommands.first(where: { $0.name == word }) else {
                let hint =
                    Suggestion.closest(to: word, among: names).map { "did you mean '\($0)'?" }
                    ?? "one of: \(names.joined(separator: ", "))"
                throw command.error("unknown subcommand '\(word)' (\(hint))", path: path)
            }
            path.append(word)
            command = subcommand
        }
        if rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }) {
            return .help(command.help(path: path))
        }
        return .run(try command.parseOwnArguments(Array(rest), path: path))
    }

    private func parseOwnArguments(_ arguments: [String], path: [String]) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments(commandPath: path, usage: usage(path: path))
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            guard argument.hasPrefix("--") else {
                throw error("unknown option '\(argument)' (options are spelt --name)", path: path)
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = options.first(where: { $0.name == name }) else {
                let names = options.map(\.name) + ["help"]
                let suggestion = Suggestion.closest(to: name, among: names).map { " (did you mean '--\($0)'?)" }
                throw error("unknown option '--\(name)'\(suggestion ?? "")", path: path)
            }
            if option.isFlag {
                if inlineValue != nil { throw error("--\(name) takes no value", path: path) }
                // A flag is an option like any other: given twice, it is a mistake to point out.
                guard parsed.flags.insert(name).inserted else {
                    throw error("--\(name) given more than once", path: path)
                }
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else { throw error("missing value for '\(option.spelling)'", path: path) }
                value = arguments[index]
                index += 1
            }
            if !option.isRepeatable, parsed.values[name] != nil {
                throw error("--\(name) given more than once", path: path)
            }
            parsed.values[name, default: []].append(value)
        }
        if let missing = options.first(where: { $0.isRequired && parsed.values[$0.name] == nil }) {
            throw error("missing required option '\(missing.spelling)'", path: path)
        }
        let expected = self.arguments ?? Arguments([], minimum: 0, maximum: 0, missingMessage: "")
        if parsed.positionals.count < expected.minimum {
            throw error(expected.missingMessage, path: path)
        }
        if let maximum = expected.maximum, parsed.positionals.count > maximum {
            throw error("unexpected argument '\(parsed.positionals[maximum])'", path: path)
        }
        return parsed
    }

    private func error(_ message: String, path: [String]) -> UsageError {
        UsageError(message: message, commandPath: path.joined(separator: " "), usage: usage(path: path))
    }
}
