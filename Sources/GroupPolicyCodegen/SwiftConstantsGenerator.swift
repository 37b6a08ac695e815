import GroupPolicy
import GroupPolicyBasics

/// Turns the capabilities and workspaces a set of policy files declares into Swift constants, so
/// that `decision.allows(.workspaceManageSeats)` compiles and a misspelt name does not.
///
/// The files are loaded with the engine's own loader, as one policy set: the generator accepts
/// exactly what ``Policy/init(contentsOfFiles:limits:)`` accepts and reports its diagnostics.
/// The output is deterministic: constants sorted by name, file names without their directories.
///
/// ```swift
/// extension GroupPolicy.Capability {
///     /// Assign and revoke seats
///     ///
///     /// `workspace.manage-seats`: a presentation capability declared in team-workspace.json.
///     public static let workspaceManageSeats: GroupPolicy.Capability = "workspace.manage-seats"
/// }
/// ```
public struct SwiftConstantsGenerator: Sendable {
    /// The access level of the generated constants.
    public enum AccessLevel: String, Sendable, CaseIterable {
        /// Visible to every module that imports the target (the default).
        case `public`
        /// Visible within the package.
        case `package`
        /// Visible within the target.
        case `internal`
    }

    /// What a successful run produced.
    public struct Output: Sendable, Equatable {
        /// The Swift source file.
        public var source: String
        /// The loader's warnings, one `file:line:col: warning: path: message` line each.
        public var warnings: [String]
    }

    /// Why no constants were generated: every problem found, one compiler-style line each
    /// (`file:line:col: error: path: message` from the loader, `file: error: path: message` for a
    /// name that cannot become a Swift constant).
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The problems, one line each.
        public var diagnostics: [String]

        /// The problems, one per line.
        public var description: String { diagnostics.joined(separator: "\n") }
    }

    /// The access level of the generated constants.
    public var accessLevel: AccessLevel

    /// Creates a generator.
    ///
    /// - Parameter accessLevel: The access level of the generated constants; default `public`.
    public init(accessLevel: AccessLevel = .public) {
        self.accessLevel = accessLevel
    }

    /// Loads the policy files as one set and returns the Swift source declaring a constant for each
    /// capability and each workspace.
    ///
    /// - Parameter policyFiles: Policy files; diagnostics name them as given.
    /// - Returns: The source and the loader's warnings.
    /// - Throws: ``Failure`` with every diagnostic when the files do not load, or when names collide
    ///   or cannot become Swift names.
    public func generate(policyFiles: [String]) throws(Failure) -> Output {
        guard !policyFiles.isEmpty else { throw Failure(diagnostics: ["error: no policy files given"]) }
        let policy: Policy
        var perFile: [(file: String, policy: Policy)] = []
        do {
            policy = try Policy(contentsOfFiles: policyFiles)
            // A set that loads is made of files that load; loading each again tells which file
            // declares what, for the comments and for errors about names.
            for file in policyFiles { perFile.append((file, try Policy(contentsOfFile: file))) }
        } catch {
            let lines = error.diagnostics.map(\.description)
            throw Failure(diagnostics: lines.isEmpty ? ["error: \(error.description)"] : lines)
        }

        // The first file declaring each capability, found in one pass over the files (not a
        // question to every file about every capability: files times capabilities). Names are
        // ASCII, so a dictionary keyed by them compares them exactly.
        var declaringFile: [String: String] = [:]
        for (file, filePolicy) in perFile {
            for capability in filePolicy.capabilities where declaringFile[capability.name] == nil {
                declaringFile[capability.name] = file
            }
        }
        var capabilities: [Constant] = []
        for capability in policy.capabilities {
            let file = declaringFile[capability.name] ?? policyFiles[0]
            let kind = policy.kind(of: capability).map { "\($0.rawValue)" } ?? "presentation"
            capabilities.append(
                Constant(
                    value: capability.name,
                    file: file,
                    jsonPath: "capabilities.\(capability.name)",
                    summary: policy.description(of: capability),
                    detail:
                        "`\(capability.name)`: a \(kind) capability declared in \(baseName(file).escapingControlCharacters)."
                )
            )
        }
        var workspaces: [Constant] = []
        for (file, filePolicy) in perFile {
            for (index, workspace) in filePolicy.workspaces.enumerated() {
                workspaces.append(
                    Constant(
                        value: workspace.id,
                        file: file,
                        jsonPath: "workspaces[\(index)].id",
                        summary: nil,
                        detail:
                            "The `\(workspace.id)` workspace, defined in \(baseName(file).escapingControlCharacters)."
                    )
                )
            }
        }

        var problems: [String] = []
        let capabilityNames = Self.name(capabilities, kind: "capability", problems: &problems)
        let workspaceNames = Self.name(workspaces, kind: "workspace", problems: &problems)
        guard problems.isEmpty else { throw Failure(diagnostics: problems) }

        let warnings = policy.warnings.map(\.description)
        // File names end up in comments: a carriage return or newline in one would end the
        // comment and make the rest of the name Swift code.
        let names = policyFiles.map { baseName($0).escapingControlCharacters }.sorted()
        var source = """
            // Generated by GroupPolicy from \(names.joined(separator: ", ")).
            // Do not edit: change the policy files instead.

            \(accessLevel.rawValue) import GroupPolicy

            """
        source += extensionSource(type: "Capability", constants: capabilityNames)
        source += extensionSource(type: "Workspace", constants: workspaceNames)
        return Output(source: source, warnings: warnings)
    }

    /// One constant to declare.
    private struct Constant {
        var value: String
        var file: String
        var jsonPath: String
        var summary: String?
        var detail: String
    }

    /// Each constant with its Swift name, sorted by name; problems for names that cannot be made or
    /// that collide.
    private static func name(
        _ constants: [Constant],
        kind: String,
        problems: inout [String]
    ) -> [(identifier: String, constant: Constant)] {
        var named: [(identifier: String, constant: Constant)] = []
        var byIdentifier: [String: Constant] = [:]
        for constant in constants {
            let identifier: String
            do {
                identifier = try SwiftName.identifier(for: constant.value)
            } catch {
                problems.append(
                    "\(constant.file): error: \(constant.jsonPath): \(kind) '\(constant.value)' \(explain(error))"
                        .escapingControlCharacters
                )
                continue
            }
            if let other = byIdentifier[identifier] {
                let message =
                    "\(constant.file): error: \(constant.jsonPath): \(kind) '\(constant.value)' and "
                    + "'\(other.value)' (\(other.file)) would both be the Swift constant '\(identifier)'; rename one"
                problems.append(message.escapingControlCharacters)
                continue
            }
            byIdentifier[identifier] = constant
            named.append((identifier, constant))
        }
        return named.sorted { $0.identifier < $1.identifier }
    }

    private static func explain(_ problem: SwiftName.Problem) -> String {
        switch problem {
        case .invalidCharacter(let character):
            "cannot be a Swift constant: '\(character)' is not an ASCII letter, digit, '.', '-', '_' or space"
        case .empty:
            "cannot be a Swift constant: it has no letters or digits"
        case .startsWithDigit:
            "cannot be a Swift constant: its Swift name would start with a digit"
        case .reserved(let identifier):
            "cannot be a Swift constant: '.\(identifier)' means something else in Swift"
        }
    }

    private func extensionSource(type: String, constants: [(identifier: String, constant: Constant)]) -> String {
        guard !constants.isEmpty else { return "" }
        var text = "\nextension GroupPolicy.\(type) {\n"
        for (index, (identifier, constant)) in constants.enumerated() {
            if index > 0 { text += "\n" }
            if let summary = constant.summary, !summary.isEmpty {
                text += docLines(summary)
                text += "    ///\n"
            }
            text += docLines(constant.detail)
            text += "    \(accessLevel.rawValue) static let \(SwiftName.declared(identifier)): GroupPolicy.\(type) = "
            text += "\(swiftStringLiteral(constant.value))\n"
        }
        return text + "}\n"
    }

    /// Documentation comment lines, one per line of `text`.
    ///
    /// Swift ends a comment at a carriage return as well as at a newline, so `text` is split at
    /// every line break (a lone `\r` in a description would otherwise turn the rest of it into
    /// code), and every other control character is escaped.
    private func docLines(_ text: String) -> String {
        text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            .map { line in
                let trimmed = Substring(String(line).escapingControlCharacters).trimmingSuffix(while: \.isWhitespace)
                return trimmed.isEmpty ? "    ///\n" : "    /// \(trimmed)\n"
            }
            .joined()
    }
}

/// A Swift string literal for any text.
func swiftStringLiteral(_ text: String) -> String {
    var literal = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": literal += "\\\""
        case "\\": literal += "\\\\"
        case "\n": literal += "\\n"
        case "\r": literal += "\\r"
        case "\t": literal += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            literal += "\\u{\(String(scalar.value, radix: 16))}"
        default: literal.unicodeScalars.append(scalar)
        }
    }
    return literal + "\""
}

/// The last path component.
func baseName(_ path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? path
}

extension Substring {
    fileprivate func trimmingSuffix(while predicate: (Character) -> Bool) -> Substring {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[..<end]
    }
}
