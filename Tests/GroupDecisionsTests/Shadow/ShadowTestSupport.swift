import Foundation
import GroupPolicy
import ServingTestSupport

@testable import AppStoreGroups
@testable import GroupDecisions

/// Policy files in a temporary directory of their own, for stores that reload.
final class PolicyDirectory: @unchecked Sendable {
    let url: URL

    /// A directory holding `files` (name to JSON text).
    init(_ files: [String: String] = [:]) throws {
        url = FileManager.default.temporaryDirectory.appending(path: "shadow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, text) in files { try write(name, text) }
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    var path: String { url.path }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: url.appending(path: name))
    }

    /// A store over the directory, reloading every `reloadInterval` when run.
    func store(reloadInterval: Duration = .seconds(3600)) throws -> PolicyStore {
        try PolicyStore(contentsOf: path, reloadInterval: reloadInterval)
    }
}

/// The salt the shadow tests' decision logs hash customers with.
let shadowTestSalt = Array("a salt of sixteen bytes or more".utf8)

/// A decision log that keeps nothing (the shadow reads its hashes only).
func discardingDecisionLog() throws -> DecisionLog {
    try DecisionLog(salt: shadowTestSalt) { _ in }
}

/// The hash a log with ``shadowTestSalt`` gives `customer`.
func shadowTestHash(_ customer: String) -> String {
    SHA256Hasher.hex(SHA256Hasher.hash(shadowTestSalt + Array(customer.utf8)))
}

/// A report of nothing compared since `since` (2027-01-15T08:00:00Z by default); a candidate only if told its revision.
func emptyShadowReport(
    liveRevision: String,
    candidateRevision: String? = nil,
    since: Date = Date(timeIntervalSince1970: 1_800_000_000)
) -> ShadowReport {
    ShadowReport(
        liveRevision: liveRevision,
        candidateRevision: candidateRevision,
        since: since,
        decisions: 0,
        changedDecisions: 0,
        dropped: 0,
        changes: []
    )
}

/// A policy document of the given capabilities and rules (JSON text of the rules array).
func policyText(id: String = "p", capabilities: [String], rules: String) -> String {
    let declarations = capabilities.map { "\"\($0)\": \"\($0)\"" }.joined(separator: ", ")
    return """
        { "format": "group-policy/v1", "id": "\(id)", "capabilities": { \(declarations) },
          "rules": \(rules) }
        """
}

extension GroupDecisionService {
    /// The decision for `customer` with `context`'s entitlements, in its environment.
    func decide(_ customer: String, in context: EvaluationContext) async throws -> ServedDecision {
        try await decision(
            anyTransactionID: customer,
            entitlements: context.entitlements,
            environment: context.environment
        )
    }
}
