/// A command's options, for parsing and for `--help`.
struct CommandSpec {
    struct Option {
        var name: String
        var valueName: String?
        var help: String
        var repeatable = false
        var isFlag: Bool { valueName == nil }
    }

    var name: String
    var synopsis: String
    var summary: String
    var options: [Option]
    var positionalName: String?
    var details: String = ""

    var usage: String { "group-policy \(name) \(synopsis)" }

    var help: String {
        var text = "\(summary)\n\nUsage: \(usage)\n\nOptions:\n"
        for option in options + [Option(name: "help", help: "Show this help.")] {
            let left = "  --\(option.name)" + (option.valueName.map { " \($0)" } ?? "")
            text += left.padding(toLength: max(left.count + 2, 30)) + option.help + "\n"
        }
        if !details.isEmpty { text += "\n" + details + "\n" }
        return text
    }
}

extension String {
    func padding(toLength length: Int) -> String {
        count >= length ? self : self + String(repeating: " ", count: length - count)
    }
}

/// Bad usage: exit 2 with a one-line message that says what to fix.
struct UsageError: Error {
    var message: String
}

/// Parsed arguments: option values by name (in order), flags, and positional arguments.
struct ParsedArguments {
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []
    var wantsHelp = false

    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func has(_ name: String) -> Bool { flags.contains(name) }

    func required(_ name: String) throws(UsageError) -> String {
        guard let value = value(name) else { throw UsageError(message: "missing required option --\(name)") }
        return value
    }

    /// Parses `--name value`, `--name=value`, flags, `-` (standard input) and `--` (end of options).
    static func parse(_ arguments: [String], for spec: CommandSpec) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
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
            if argument == "--help" || argument == "-h" {
                parsed.wantsHelp = true
                continue
            }
            guard argument.hasPrefix("--") else {
                throw UsageError(message: "unknown option '\(argument)' (options are spelt --name)")
            }
            var name = String(argument.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = spec.options.first(where: { $0.name == name }) else {
                let names = spec.options.map(\.name) + ["help"]
                let suggestion = closestName(to: name, among: names).map { " (did you mean '--\($0)'?)" } ?? ""
                throw UsageError(message: "unknown option '--\(name)'\(suggestion)")
            }
            if option.isFlag {
                if inlineValue != nil { throw UsageError(message: "--\(name) takes no value") }
                parsed.flags.insert(name)
                continue
            }
            let value: String
            if let inlineValue {
                value = inlineValue
            } else {
                guard index < arguments.count else {
                    throw UsageError(message: "--\(name) needs a value (\(option.valueName ?? "VALUE"))")
                }
                value = arguments[index]
                index += 1
            }
            if !option.repeatable, parsed.values[name] != nil {
                throw UsageError(message: "--\(name) given more than once")
            }
            parsed.values[name, default: []].append(value)
        }
        return parsed
    }

    private static func closestName(to word: String, among names: [String]) -> String? {
        names.min { distance(word, $0) < distance(word, $1) }.flatMap { distance(word, $0) <= 2 ? $0 : nil }
    }

    private static func distance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs)
        let b = Array(rhs)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
