public import GroupPolicy
import GroupPolicyBasics

/// The rules of a policy that can never matter, and the capabilities no customer can receive:
/// found exactly over the scenario space, with no solver (see the DocC article "The scenario
/// space", section "Rules that never matter").
///
/// A rule is *redundant* when removing it changes no decision anywhere: in every scenario, the
/// group's capabilities are the same with it and without it (a grant whose capabilities other
/// grants give wherever it matches, or denies remove; a deny whose capabilities other denies
/// remove wherever it matches, or no grant gives). A capability is *always denied* when some rule
/// grants it but no scenario receives it: no rule grants it where no deny rule removes it. Both are
/// warnings of `group-policy check`, at the rule's or the capability declaration's location; a
/// rule the loader already warns can never match or grant is not warned about again.
public struct RuleAnalysis: Sendable {
    /// The warnings: each redundant rule at its location, then each always-denied capability at
    /// its declaration, in policy order.
    public let warnings: [Diagnostic]
    /// Why the analysis was not done, or not finished; `nil` when it was done.
    ///
    /// Its space over the scenario budget, or its work over the work limit; then there are no
    /// warnings.
    public let skipped: String?
    /// How many scenarios the analysis's reduced space holds.
    public let scenarioCount: Int
}

extension Diagnostic.Kind {
    /// A rule whose removal changes no decision in any scenario.
    public static let redundantRule = Diagnostic.Kind(rawValue: "redundant-rule")
    /// A capability some rule grants but no scenario receives.
    public static let capabilityAlwaysDenied = Diagnostic.Kind(rawValue: "capability-always-denied")
}

extension Policy {
    /// Finds the rules that can never matter and the capabilities no scenario receives, exactly,
    /// over the policy's reduced scenario space (that of a diff of the policy with itself).
    ///
    /// - Parameters:
    ///   - budget: The most scenarios the reduced space may hold: `check` passes its invariant
    ///     budget. A larger space is not analysed.
    ///   - workLimit: The most rule checks the analysis may cost, estimated before and counted
    ///     while it runs (the work limit of `check` and `diff`, 1,000,000,000, unless given).
    /// - Returns: The warnings, or why there are none.
    public func analyzeRules(budget: Int = Policy.defaultInvariantBudget, workLimit: Int? = nil) -> RuleAnalysis {
        analyzeRules(
            budget: budget,
            workLimit: workLimit ?? ScenarioWork.limit,
            space: ScenarioSpace(documents: documents, maximumCandidates: ScenarioSpace.maximumCandidates)
        )
    }

    /// ``analyzeRules(budget:workLimit:)`` over `space`, the policy's own scenario space (which a
    /// check builds once for the invariants and the analysis).
    func analyzeRules(budget: Int, workLimit limit: Int, space: ScenarioSpace) -> RuleAnalysis {
        let analyzer = RuleAnalyzer(policy: self, space: space, budget: budget, workLimit: limit)
        if let refusal = analyzer.refusal {
            return RuleAnalysis(warnings: [], skipped: refusal, scenarioCount: analyzer.scenarioCount)
        }
        let findings = analyzer.run(workLimit: limit)
        if let stopped = findings.stopped {
            return RuleAnalysis(warnings: [], skipped: stopped, scenarioCount: analyzer.scenarioCount)
        }
        let documents = self.documents
        // Rules the loader already says can never match or grant.
        let warned = Set(
            warnings.filter { $0.kind == .grantAlwaysDenied || $0.kind == .unreachableConsumerRule }
                .map { "\($0.location?.file ?? "")\u{0}\($0.jsonPath)" }
        )
        var diagnostics: [Diagnostic] = []
        for ((document, index), matters) in zip(analyzer.ruleCoordinates, findings.matters) where !matters {
            let rule = documents[document].rules[index]
            guard !warned.contains("\(rule.location?.file ?? "")\u{0}\(rule.path.description)") else { continue }
            let label = ruleLabels(ofDocument: document)[index]
            let reason =
                rule.effect == .grant
                ? "wherever it matches, each capability it grants is granted by another rule or denied"
                : "wherever it matches, each capability it denies is denied by another rule or granted by none"
            diagnostics.append(
                Diagnostic(
                    severity: .warning,
                    kind: .redundantRule,
                    location: rule.location,
                    jsonPath: rule.path.description,
                    message: "rule '\(label)' is redundant: removing it changes no decision in any scenario (\(reason))"
                )
            )
        }
        var reported: Set<Int> = []
        for (document, _) in documents.enumerated() {
            for declaration in capabilityDeclarations(ofDocument: document) {
                // A capability two files of a set declare is reported once, at the first.
                guard let bit = capabilityIndex(of: declaration.name), reported.insert(bit).inserted else { continue }
                let word = bit >> 6
                let mask: UInt64 = 1 << UInt64(bit & 63)
                guard findings.granted[word] & mask != 0, findings.received[word] & mask == 0 else { continue }
                diagnostics.append(
                    Diagnostic(
                        severity: .warning,
                        kind: .capabilityAlwaysDenied,
                        location: declaration.location,
                        jsonPath: JSONPath.root.appending("capabilities").appending(declaration.name).description,
                        message: "capability '\(declaration.name)' is always denied: no scenario receives it "
                            + "(no rule grants it where no deny rule removes it)"
                    )
                )
            }
        }
        return RuleAnalysis(warnings: Self.capped(diagnostics), skipped: nil, scenarioCount: analyzer.scenarioCount)
    }

    /// At most 100 warnings of a kind, as loading reports diagnostics, then one saying how many
    /// more there are, at the first left out.
    private static func capped(_ diagnostics: [Diagnostic]) -> [Diagnostic] {
        let maximum = 100
        var kept: [Diagnostic] = []
        var omitted: [Diagnostic.Kind: (first: Diagnostic, count: Int)] = [:]
        var counts: [Diagnostic.Kind: Int] = [:]
        for diagnostic in diagnostics {
            counts[diagnostic.kind, default: 0] += 1
            if counts[diagnostic.kind, default: 0] <= maximum {
                kept.append(diagnostic)
            } else {
                omitted[diagnostic.kind] = (
                    omitted[diagnostic.kind]?.first ?? diagnostic, (omitted[diagnostic.kind]?.count ?? 0) + 1
                )
            }
        }
        for kind in [Diagnostic.Kind.redundantRule, .capabilityAlwaysDenied] {
            guard let (first, count) = omitted[kind] else { continue }
            var summary = first
            summary.message =
                "\(count) more warnings of kind \(kind.rawValue) from here on are not listed (at most \(maximum) of a "
                + "kind per file)"
            kept.append(summary)
        }
        return kept
    }
}
