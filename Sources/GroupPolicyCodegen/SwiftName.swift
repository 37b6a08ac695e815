/// How a capability name or workspace id becomes a Swift member name.
///
/// The name is split into parts at `.`, `-`, `_` and spaces; the first part starts lower case
/// (a leading acronym is lowered as a whole: `SSO.login` is `ssoLogin`, `URLSession` is
/// `urlSession`), every later part starts upper case, and the rest of each part is kept as it is:
/// `workspace.manage-seats` is `workspaceManageSeats`. Swift keywords are escaped with backticks.
enum SwiftName {
    /// Why a name cannot become a Swift member name.
    enum Problem: Error, Equatable {
        /// A character that is neither an ASCII letter or digit nor a separator.
        case invalidCharacter(Character)
        /// No letters or digits at all.
        case empty
        /// The first character after the separators is a digit.
        case startsWithDigit
        /// A name that means something else after a dot (`init`, `self`), which backticks do not
        /// make usable as `.name`.
        case reserved(String)
    }

    /// The member name without backticks.
    static func identifier(for name: String) throws(Problem) -> String {
        var parts: [String] = []
        var current = ""
        for character in name {
            if separators.contains(character) {
                if !current.isEmpty { parts.append(current) }
                current = ""
            } else if character.isASCII, character.isLetter || character.isNumber {
                current.append(character)
            } else {
                throw .invalidCharacter(character)
            }
        }
        if !current.isEmpty { parts.append(current) }
        guard let first = parts.first else { throw .empty }
        guard let firstCharacter = first.first, !firstCharacter.isNumber else { throw .startsWithDigit }
        let identifier = lowercasingLeadingAcronym(first) + parts.dropFirst().map(uppercasingFirst).joined()
        if reservedAfterDot.contains(identifier) { throw .reserved(identifier) }
        return identifier
    }

    /// The identifier as it must be declared: in backticks when it is a keyword.
    static func declared(_ identifier: String) -> String {
        keywords.contains(identifier) ? "`\(identifier)`" : identifier
    }

    private static let separators: Set<Character> = [".", "-", "_", " "]

    /// `Admin` → `admin`, `SSO` → `sso`, `URLSession` → `urlSession`, `iOS` → `iOS`.
    private static func lowercasingLeadingAcronym(_ part: String) -> String {
        let characters = Array(part)
        var upper = 0
        while upper < characters.count, characters[upper].isUppercase { upper += 1 }
        // In `URLSession` the `S` starts the next word; keep it upper case.
        let lowered = upper > 1 && upper < characters.count ? upper - 1 : upper
        return String(characters[..<lowered]).lowercased() + String(characters[lowered...])
    }

    private static func uppercasingFirst(_ part: String) -> String {
        part.prefix(1).uppercased() + part.dropFirst()
    }

    /// Names that cannot be used as `.name` even in backticks: `.init` names an initializer and
    /// `Capability.self` the type. (`Type` and `Protocol` are never made: names start lower case.)
    private static let reservedAfterDot: Set<String> = ["init", "self"]

    /// The keywords The Swift Programming Language reserves in declarations, statements,
    /// expressions and types.
    ///
    /// Keywords reserved only in particular contexts, such as `get`, need no backticks as member
    /// names.
    private static let keywords: Set<String> = [
        "associatedtype", "borrowing", "class", "consuming", "deinit", "enum", "extension", "fileprivate", "func",
        "import", "init", "inout", "internal", "let", "nonisolated", "open", "operator", "private",
        "precedencegroup", "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var",
        "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if",
        "in", "repeat", "return", "switch", "throw", "where", "while", "Any", "as", "await", "false", "is", "nil",
        "self", "Self", "super", "throws", "true", "try",
    ]
}
