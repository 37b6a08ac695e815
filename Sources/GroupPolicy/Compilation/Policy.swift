import GroupPolicyBasics

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A loaded, validated and compiled policy (or a set of policies) that turns Get Customer Groups
/// responses into ``Decision``s.
///
/// A `Policy` is immutable and `Sendable`: load it once, share it across every request and thread.
/// Loading is all or nothing: a file with any error throws a ``GroupPolicyError`` listing every
/// diagnostic, and nothing is half-loaded. Warnings of a policy that loads are in ``warnings``.
///
/// ```swift
/// let policy = try Policy(contentsOfFile: "Policies/team-workspace.json")
/// let response = try GetCustomerGroupsResponse(jsonBytes: body)
/// let decision = policy.evaluate(response, in: EvaluationContext(environment: .production))
/// if decision.allows("workspace.manage-seats") { … }
/// ```
public struct Policy: Sendable {
    let compiled: CompiledPolicy
    /// The policy set's revision: a digest of its files' names and bytes, 16 hex digits.
    ///
    /// 64-bit FNV-1a over, for each file in load order, the length and UTF-8 bytes of its name (the
    /// last path component) and the length and bytes of its content; `""` is the name of a policy
    /// loaded from bytes without a file name. Stable across processes and machines, so a fleet can
    /// tell which version made a decision; not cryptographic.
    public let revision: String

    init(documents: [PolicyDocument], revision: String = "") {
        compiled = CompiledPolicy(documents: documents)
        self.revision = revision
    }

    /// Loads one policy file.
    ///
    /// - Parameters:
    ///   - path: The file's path; diagnostics print it as given.
    ///   - limits: Bounds on size, rules, capabilities and nesting.
    /// - Throws: A ``GroupPolicyError``: `invalidPolicy` with every diagnostic, `unreadableFile`, or
    ///   `limitExceeded`.
    public init(contentsOfFile path: String, limits: PolicyLimits = .default) throws(GroupPolicyError) {
        let bytes = try readFile(path, limits: limits)
        try self.init(jsonBytes: bytes, fileName: path, limits: limits)
    }

    /// Loads a policy from bytes.
    ///
    /// - Parameters:
    ///   - jsonBytes: The policy file's content.
    ///   - fileName: The name diagnostics print, if the bytes came from a file.
    ///   - limits: Bounds on size, rules, capabilities and nesting.
    /// - Throws: A ``GroupPolicyError`` with code `invalidPolicy` listing every diagnostic.
    public init(
        jsonBytes: some Collection<UInt8>,
        fileName: String? = nil,
        limits: PolicyLimits = .default
    ) throws(GroupPolicyError) {
        let bytes = Array(jsonBytes)
        let document = try Self.parseDocument(bytes, fileName: fileName, limits: limits)
        var revision = PolicyRevision()
        revision.add(fileName: fileName ?? "", bytes: bytes)
        self.init(documents: [document], revision: revision.hex)
    }

    /// Loads a policy set: every `*.json` file directly in `path` that is not a test file
    /// (`*.tests.json`) or a JSON Schema (`*.schema.json`), in file-name order.
    ///
    /// The policies share one namespace of capabilities and workspaces and are evaluated together:
    /// a deny in any policy removes that capability from the group whatever policy granted it.
    /// Provenance names rules `policy-id/rule-id` when the set holds several policies.
    public init(contentsOfDirectory path: String, limits: PolicyLimits = .default) throws(GroupPolicyError) {
        try self.init(contentsOfDirectory: path, limits: limits) { file throws(GroupPolicyError) in
            try readFile(file, limits: limits)
        }
    }

    /// Loads a policy set from the given files (see ``init(contentsOfDirectory:limits:)``).
    public init(contentsOfFiles paths: [String], limits: PolicyLimits = .default) throws(GroupPolicyError) {
        try self.init(contentsOfFiles: paths, limits: limits) { file throws(GroupPolicyError) in
            try readFile(file, limits: limits)
        }
    }

    /// Loads a file as a single policy, or a directory as a policy set, taking each file's bytes
    /// from `read`: for the tooling, which evaluates files as an author is editing them, with the
    /// same loading as the files on disk get.
    ///
    /// - Parameters:
    ///   - path: A policy file or a directory; which it is comes from the file system.
    ///   - limits: Bounds on size, rules, capabilities and nesting, for the bytes `read` returns too.
    ///   - read: The bytes of a policy file, given its path as the directory listing spells it.
    /// - Throws: What ``init(contentsOfDirectory:limits:)`` throws, and what `read` throws.
    package init(
        contentsOf path: String,
        limits: PolicyLimits,
        reading read: (String) throws(GroupPolicyError) -> [UInt8]
    ) throws(GroupPolicyError) {
        if isDirectory(path) {
            try self.init(contentsOfDirectory: path, limits: limits, reading: read)
        } else {
            try self.init(jsonBytes: try read(path), fileName: path, limits: limits)
        }
    }

    /// Loads the policy set of a directory, taking each file's bytes from `read` (see
    /// ``init(contentsOf:limits:reading:)``).
    init(
        contentsOfDirectory path: String,
        limits: PolicyLimits,
        reading read: (String) throws(GroupPolicyError) -> [UInt8]
    ) throws(GroupPolicyError) {
        let files = try PolicyFiles.policySet(inDirectory: path)
        guard !files.isEmpty else {
            throw GroupPolicyError(code: .unreadableFile, message: "no policy files (*.json) in directory \(path)")
        }
        try self.init(contentsOfFiles: files, limits: limits, reading: read)
    }

    /// Loads a policy set from the given files, taking each file's bytes from `read` (see
    /// ``init(contentsOf:limits:reading:)``).
    init(
        contentsOfFiles paths: [String],
        limits: PolicyLimits,
        reading read: (String) throws(GroupPolicyError) -> [UInt8]
    ) throws(GroupPolicyError) {
        var documents: [PolicyDocument] = []
        // Kept only while loading, so that conflicts between files can point at their values.
        var sources: [SourceText] = []
        var diagnostics: [Diagnostic] = []
        var failed = false
        var revision = PolicyRevision()
        // The limits bound the set as a whole: past one of them, no further file is read.
        var totals: PolicySetTotals? = PolicySetTotals()
        for path in paths {
            do throws(GroupPolicyError) {
                let bytes = try read(path)
                revision.add(fileName: path, bytes: bytes)
                let before = totals ?? PolicySetTotals()
                totals?.bytes += bytes.count
                if before.bytes + bytes.count > limits.maximumBytes {
                    throw GroupPolicyError(
                        code: .limitExceeded,
                        message: "\(path): the policy set's files hold \(before.bytes + bytes.count) bytes "
                            + "together, over the limit of \(limits.maximumBytes) bytes per policy set"
                    )
                }
                documents.append(try Self.parseDocument(bytes, fileName: path, limits: limits, setTotals: &totals))
                sources.append(SourceText(fileName: path, bytes: bytes))
            } catch {
                failed = true
                diagnostics +=
                    error.diagnostics.isEmpty
                    ? [
                        Diagnostic(
                            severity: .error,
                            kind: error.code == .limitExceeded ? .limitExceeded : .unreadableFile,
                            location: nil,
                            jsonPath: "$",
                            message: error.message
                        )
                    ]
                    : error.diagnostics
                // Past a limit the set as a whole is over it: the remaining files are not read.
                if error.code == .limitExceeded || error.diagnostics.contains(where: { $0.kind == .limitExceeded }) {
                    break
                }
            }
        }
        diagnostics += Self.setConflicts(documents, sources: sources)
        if failed || diagnostics.contains(where: { $0.severity == .error }) {
            throw GroupPolicyError(
                code: .invalidPolicy,
                message: "the policy set does not load",
                location: diagnostics.first?.location,
                jsonPath: diagnostics.first?.jsonPath,
                diagnostics: diagnostics
            )
        }
        self.init(documents: documents, revision: revision.hex)
    }

    /// The revision a policy set of these files would have (see ``revision``), without compiling
    /// them: for `group-policy check`, which loads each file on its own.
    package static func revision(
        ofFiles paths: [String],
        limits: PolicyLimits = .default
    ) throws(GroupPolicyError) -> String {
        var revision = PolicyRevision()
        for path in paths { revision.add(fileName: path, bytes: try readFile(path, limits: limits)) }
        return revision.hex
    }

    /// Loads a file as a single policy, or a directory as a policy set.
    public init(contentsOf path: String, limits: PolicyLimits = .default) throws(GroupPolicyError) {
        if isDirectory(path) {
            try self.init(contentsOfDirectory: path, limits: limits)
        } else {
            try self.init(contentsOfFile: path, limits: limits)
        }
    }

    /// The document of a policy of one file, or the error listing every diagnostic.
    static func parseDocument(
        _ bytes: [UInt8],
        fileName: String?,
        limits: PolicyLimits
    ) throws(GroupPolicyError) -> PolicyDocument {
        var single: PolicySetTotals? = nil
        return try parseDocument(bytes, fileName: fileName, limits: limits, setTotals: &single)
    }

    /// The document of one file, or the error listing every diagnostic; a file of a set counts
    /// what it holds into `setTotals`, and the limits bound the set's files together.
    static func parseDocument(
        _ bytes: [UInt8],
        fileName: String?,
        limits: PolicyLimits,
        setTotals: inout PolicySetTotals?
    ) throws(GroupPolicyError) -> PolicyDocument {
        let (document, diagnostics) = PolicyParser.parse(
            bytes: bytes,
            fileName: fileName,
            limits: limits,
            earlier: &setTotals
        )
        guard let document else {
            let first = diagnostics.first { $0.severity == .error }
            throw GroupPolicyError(
                code: .invalidPolicy,
                message: first?.message ?? "the policy does not load",
                location: first?.location,
                jsonPath: first?.jsonPath,
                diagnostics: diagnostics
            )
        }
        return document
    }

    // MARK: Introspection

    /// The ids of the policies, in load order.
    public var ids: [String] { compiled.documents.map(\.id) }

    /// The warnings found while loading, errors being impossible in a loaded policy.
    public var warnings: [Diagnostic] { compiled.documents.flatMap(\.warnings) }

    /// Every declared capability, sorted by name: the catalog's order, so the capability of bit `i`
    /// of a capability bit set is `capabilities[i]`.
    public var capabilities: [Capability] { compiled.catalog.names.map { Capability($0) } }

    /// Whether a declared capability is `presentation` or `content`; `nil` when not declared.
    public func kind(of capability: Capability) -> CapabilityKind? {
        compiled.catalog.index(of: capability.name).map { compiled.catalog.kinds[$0] }
    }

    /// A declared capability's description, if it has one.
    public func description(of capability: Capability) -> String? {
        compiled.catalog.index(of: capability.name).flatMap { compiled.catalog.descriptions[$0] }
    }

    /// Every workspace definition's id, in definition order.
    public var workspaces: [Workspace] {
        compiled.documents.flatMap { $0.workspaces.map { Workspace($0.id) } }
    }

    /// The number of rules across the set.
    public var ruleCount: Int { compiled.documents.reduce(0) { $0 + $1.ruleCount } }
}

// MARK: Files

/// Reads a whole policy or test file through the bounded reader: never more than the size limit
/// (plus one byte) however large the file, stream or special file is.
///
/// A file over the limit is an error with one diagnostic at its start
/// (`path:1:1: error: $: file of N bytes is over the limit of M bytes`), like every other finding
/// about a policy or test file, so that `check` prints and counts it like them.
///
/// - Parameters:
///   - path: The file.
///   - limits: The limits it is held to.
///   - edited: Bytes that stand for the file's (an author's edit the tooling holds), refused over
///     the limit as the file would be; `nil` reads the file.
/// - Returns: The file's bytes, or `edited`.
/// - Throws: `limitExceeded` with that diagnostic, or the reader's `unreadableFile`.
package func readFile(
    _ path: String,
    limits: PolicyLimits,
    edited: [UInt8]? = nil
) throws(GroupPolicyError) -> [UInt8] {
    if let edited {
        guard edited.count <= limits.maximumBytes else {
            let message = "file of \(edited.count) bytes is over the limit of \(limits.maximumBytes) bytes"
            throw fileOverTheLimit(path, readerMessage: "\(path): \(message)")
        }
        return edited
    }
    do {
        return try BoundedFileReader.read(path, maximumBytes: limits.maximumBytes)
    } catch  where error.code == .limitExceeded && error.diagnostics.isEmpty {
        throw fileOverTheLimit(path, readerMessage: error.message)
    }
}

/// A size limit error at the file's start, from the bounded reader's message (which starts with
/// the path, left out of the diagnostic's message as its location names the file).
private func fileOverTheLimit(_ path: String, readerMessage: String) -> GroupPolicyError {
    let prefix = "\(path): "
    let message = readerMessage.hasPrefix(prefix) ? String(readerMessage.dropFirst(prefix.count)) : readerMessage
    let location = SourcePosition(file: path, line: 1, column: 1)
    return GroupPolicyError(
        code: .limitExceeded,
        message: readerMessage,
        location: location,
        jsonPath: "$",
        diagnostics: [
            Diagnostic(severity: .error, kind: .limitExceeded, location: location, jsonPath: "$", message: message)
        ]
    )
}
