/// The server's command line: `--name value` or `--name=value` options, each at most once, and
/// `--help`; no positional arguments.
///
/// Small on purpose, so the example needs nothing but this package's products and the toolchain:
/// an app copying the server would use swift-argument-parser instead.
struct CommandLineOptions {
    struct Option {
        var name: String
        var valueName: String
        var help: String

        init(_ name: String, value valueName: String, help: String) {
            self.name = name
            self.valueName = valueName
            self.help = help
        }

        var spelling: String { "--\(name) <\(valueName)>" }
    }

    var name: String
    var summary: String
    var options: [Option]
    var details: String

    /// What the arguments ask for: the values given by option name, or `nil` for the help.
    func parse(_ arguments: [String]) throws(UsageFailure) -> [String: String]? {
        if arguments.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }) {
            return nil
        }
        var values: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument != "--" else {
                throw UsageFailure(message: "unexpected argument '\(argument)'")
            }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = options.first(where: { $0.name == name }) else {
                throw UsageFailure(message: "unknown option '--\(name)' (see --help)")
            }
            if value == nil {
                guard index < arguments.count else {
                    throw UsageFailure(message: "missing value for '\(option.spelling)'")
                }
                value = arguments[index]
                index += 1
            }
            guard values[name] == nil else { throw UsageFailure(message: "--\(name) given more than once") }
            values[name] = value
        }
        return values
    }

    /// The `--help` text: the summary, the usage line, a table of the options, then the details.
    var help: String {
        let rows = options.map { ($0.spelling, $0.help) } + [("-h, --help", "Show this help.")]
        let width = max(24, (rows.map(\.0.count).max() ?? 0) + 4)
        let table = rows.map { left, right in
            let indented = "  " + left
            return indented + String(repeating: " ", count: width - indented.count) + right + "\n"
        }
        return "\(summary)\n\nUsage: \(name) [options]\n\nOptions:\n" + table.joined() + "\n" + details + "\n"
    }

    /// A mistake on the command line, on one line.
    struct UsageFailure: Error {
        var message: String
    }
}
