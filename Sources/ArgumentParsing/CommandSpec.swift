/// A command of a command-line tool: its options and positional arguments, or its subcommands.
///
/// One tree of these describes a whole tool; ``parse(_:)`` walks it and ``help`` prints the part of
/// it that one command takes. A command with subcommands takes no options or arguments of its own.
package struct CommandSpec: Sendable {
    /// An option spelt `--name value`, `--name=value`, or a flag `--name`.
    package struct Option: Sendable {
        /// The name without its dashes.
        package var name: String
        /// What the value stands for in usage and help (`id` shows as `<id>`); `nil` for a flag.
        package var valueName: String?
        /// One line for `--help`.
        package var help: String
        /// Whether the option may be given more than once (each value is kept, in order).
        package var isRepeatable: Bool
        /// Whether the command cannot run without it.
        package var isRequired: Bool

        /// An option that takes a value.
        package init(
            _ name: String,
            value valueName: String,
            help: String,
            repeatable: Bool = false,
            required: Bool = false
        ) {
            self.name = name
            self.valueName = valueName
            self.help = help
            self.isRepeatable = repeatable
            self.isRequired = required
        }

        /// A flag: present or not.
        package static func flag(_ name: String, help: String) -> Option {
            var option = Option(name, value: "", help: help)
            option.valueName = nil
            return option
        }

        var isFlag: Bool { valueName == nil }

        /// `--name <value>`, or `--name` for a flag.
        var spelling: String { "--\(name)" + (valueName.map { " <\($0)>" } ?? "") }
    }

    /// The positional arguments a command takes.
    package struct Arguments: Sendable {
        /// Their names in usage and help; the last one repeats when ``maximum`` is `nil`.
        package var names: [String]
        /// The fewest the command needs.
        package var minimum: Int
        /// The most it takes; `nil` for any number.
        package var maximum: Int?
        /// What to say when fewer than ``minimum`` are given.
        package var missingMessage: String

        /// Positional arguments named `names`, at least `minimum`, at most `maximum`.
        package init(_ names: [String], minimum: Int, maximum: Int?, missingMessage: String) {
            self.names = names
            self.minimum = minimum
            self.maximum = maximum
            self.missingMessage = missingMessage
        }
    }

    /// The word that selects the command (the tool's name for the root).
    package var name: String
    /// One line: what the command does.
    package var summary: String
    /// The options, in the order `--help` lists them.
    package var options: [Option]
    /// The positional arguments, if it takes any.
    package var arguments: Arguments?
    /// Subcommands; a command with subcommands runs none of its own.
    package var subcommands: [CommandSpec]
    /// Paragraphs printed after the options by `--help`.
    package var details: String

    /// A command that runs.
    package init(
        _ name: String,
        summary: String,
        options: [Option] = [],
        arguments: Arguments? = nil,
        details: String = ""
    ) {
        self.name = name
        self.summary = summary
        self.options = options
        self.arguments = arguments
        self.subcommands = []
        self.details = details
    }

    /// A command that only groups subcommands.
    package init(_ name: String, summary: String, subcommands: [CommandSpec], details: String = "") {
        self.init(name, summary: summary, details: details)
        self.subcommands = subcommands
    }
}
