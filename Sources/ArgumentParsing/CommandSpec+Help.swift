extension CommandSpec {
    /// The usage line of the command at `path` (the words from the tool's name to this command):
    /// required options, positional arguments, then `[options]` when it takes any others.
    package func usage(path: [String]) -> String {
        var words = path
        if !subcommands.isEmpty {
            words.append("<subcommand>")
            return words.joined(separator: " ")
        }
        words += options.filter(\.isRequired).map(\.spelling)
        if let arguments, !arguments.names.isEmpty {
            var names = arguments.names.map { "<\($0)>" }
            if arguments.maximum == nil { names.append("...") }
            let text = names.joined(separator: " ")
            words.append(arguments.minimum == 0 ? "[\(text)]" : text)
        }
        if options.contains(where: { !$0.isRequired }) { words.append("[options]") }
        return words.joined(separator: " ")
    }

    /// `--help` of the command at `path`: what it does, its usage, and only its own options (or
    /// its subcommands).
    package func help(path: [String]) -> String {
        var text = "\(summary)\n\nUsage: \(usage(path: path))\n"
        if subcommands.isEmpty {
            let rows = options.map { ($0.spelling, $0.help) } + [("-h, --help", "Show this help.")]
            text += "\nOptions:\n" + table(rows)
        } else {
            text += "\nSubcommands:\n" + table(subcommands.map { ($0.name, $0.summary) })
            let command = path.joined(separator: " ")
            text += "\n  See '\(command) <subcommand> --help' for a subcommand's options.\n"
        }
        if !details.isEmpty { text += "\n" + details + "\n" }
        return text
    }

    private func table(_ rows: [(left: String, right: String)]) -> String {
        let width = max(24, (rows.map(\.left.count).max() ?? 0) + 4)
        return rows.map { row in
            let left = "  " + row.left
            return left + String(repeating: " ", count: width - left.count) + row.right + "\n"
        }.joined()
    }
}
