import GroupPolicy

/// Finds the minimal scenarios in which a workspace membership differs between two versions of a
/// policy: a customer's group forms a workspace in one version and not in the other, or forms it
/// as an administrator in one and as a member in the other.
///
/// Memberships are evaluated by the engine (``Policy/evaluate(_:in:)``), over the scenario space
/// of both versions (the same one as the capability diff's), and only for the workspaces whose
/// definitions differ: a workspace defined alike in both versions, byte for byte and seen through
/// alike sandbox aliases, forms alike everywhere. Why the reduced enumeration suffices: whether a
/// group forms a workspace, and as an administrator, only grows with its role entries and the
/// entitlements. So a change from administrator to member keeps, in a minimal scenario, an entry
/// through which the old version makes it an administrator and perhaps one through which the new
/// version makes it a member; a change to or from no membership keeps at most the entry that makes
/// it one; and the entitlements are the workspace's requirements in either version or both.
struct WorkspaceDiffer {
    /// Every workspace id of either version, sorted.
    let workspaceIDs: [String]
    /// The positions in ``workspaceIDs`` of the workspaces defined differently.
    let changed: [Int]
    let entitlementSets: [[String]]
    let plans: [DiffPlan]
    /// How many scenarios the enumeration visits (0 when no workspace changed).
    let scenarioCount: Int
    /// The estimated rule checks of the enumeration (``ScenarioWork``).
    let work: Int
    private let old: Policy
    private let new: Policy

    /// A workspace's definition in one version, with the sandbox aliases its document applies.
    private struct Definition {
        var document: Int
        var workspace: WorkspaceDefinition
        var aliases: [String: String]
    }

    /// - Parameters:
    ///   - old: The version before the change.
    ///   - new: The version after the change.
    ///   - space: Both versions' scenario space, old documents first (built, not over its limit).
    init(old: Policy, new: Policy, space: ScenarioSpace) {
        self.old = old
        self.new = new
        let oldDocuments = old.compiled.documents
        let newDocuments = new.compiled.documents
        var definitions: [[ExactName: Definition]] = [[:], [:]]
        for (side, documents) in [oldDocuments, newDocuments].enumerated() {
            for (index, document) in documents.enumerated() {
                for workspace in document.workspaces where definitions[side][ExactName(workspace.id)] == nil {
                    definitions[side][ExactName(workspace.id)] = Definition(
                        document: side == 0 ? index : oldDocuments.count + index,
                        workspace: workspace,
                        aliases: document.productAliases
                    )
                }
            }
        }
        let ids = Set(definitions[0].keys).union(definitions[1].keys).sorted()
        workspaceIDs = ids.map(\.string)
        changed = ids.indices.filter { index in
            guard let before = definitions[0][ids[index]], let after = definitions[1][ids[index]] else { return true }
            return !Self.alike(before, after)
        }

        var sets: Set<[ExactName]> = [[]]
        for index in changed {
            let requirements = (0..<2).compactMap { definitions[$0][ids[index]]?.workspace.requires.entitlements }
            for entitlements in requirements { sets.insert(Set(entitlements.map(ExactName.init)).sorted()) }
            sets.insert(Set(requirements.joined().map(ExactName.init)).sorted())
        }
        entitlementSets = changed.isEmpty ? [] : sets.sorted(by: smallerFirst).map { $0.map(\.string) }

        var plans: [DiffPlan] = []
        var count = 0
        var work = 0
        let oldWork = ScenarioWork(
            documents: oldDocuments.map(\.document),
            capabilityCount: old.compiled.catalog.names.count
        )
        let newWork = ScenarioWork(
            documents: newDocuments.map(\.document),
            capabilityCount: new.compiled.catalog.names.count
        )
        for environment in StoreEnvironment.allCases where !changed.isEmpty {
            let candidates = space.candidates(in: environment)
            var singles = Set<Int>()
            var firsts = Set<Int>()
            var seconds = Set<Int>()
            for index in changed {
                let versions = (0..<2).map { definitions[$0][ids[index]] }
                let relevant = versions.map { $0.map { Self.relevant($0, candidates, environment) } }
                let admin = versions.indices.map { side in
                    versions[side].map { Self.admin($0, relevant[side] ?? [], candidates) } ?? []
                }
                for side in 0..<2 {
                    guard let definition = versions[side] else { continue }
                    // One entry shows a membership appearing or going: with a product condition,
                    // one it names; without, one that makes its group an administrator.
                    singles.formUnion(definition.workspace.match.productIDs == nil ? admin[side] : relevant[side] ?? [])
                    // Administrator in one version, member in the other: an entry that makes the
                    // group an administrator here and is not relevant there, beside one relevant
                    // there that does not make it an administrator.
                    let other = 1 - side
                    guard let otherRelevant = relevant[other], versions[other]?.workspace.match.productIDs != nil
                    else { continue }
                    let first = admin[side].subtracting(otherRelevant)
                    guard !first.isEmpty else { continue }
                    firsts.formUnion(first)
                    seconds.formUnion(otherRelevant.subtracting(admin[other]))
                }
            }
            let plan = DiffPlan(
                environment: environment,
                candidates: candidates,
                groupTypes: space.groupTypes,
                groupIDs: space.groupIDs(in: environment),
                selection: EntrySelection(includesEmpty: true, singles: singles, pairFirst: firsts, pairSecond: seconds)
            )
            count = saturatingSum(count, plan.scenarioCount(entitlementSets: entitlementSets.count))
            // Each scenario is a full decision under each version.
            let idCost = saturatingSum(
                saturatingSum(oldWork.cost(groupIDs: plan.groupIDs), newWork.cost(groupIDs: plan.groupIDs)),
                saturatingProduct(2 * ScenarioWork.decisionOverhead, plan.groupIDs.count)
            )
            work = saturatingSum(work, plan.work(entitlementSets: entitlementSets.count, idCost: idCost))
            plans.append(plan)
        }
        self.plans = plans
        scenarioCount = count
        self.work = work
    }

    /// Whether two definitions of one workspace form it alike in every scenario: the same match,
    /// administrator roles and requirements, by their bytes, and the same aliases where the
    /// match names products.
    private static func alike(_ lhs: Definition, _ rhs: Definition) -> Bool {
        // Absent, any value, or these values.
        func names(_ condition: ValueCondition?) -> (kind: Int, values: [ExactName]) {
            switch condition {
            case nil: (0, [])
            case .any?: (1, [])
            case .oneOf(let values)?: (2, Set(values.map(ExactName.init)).sorted())
            }
        }
        func aliases(_ definition: Definition) -> [[ExactName]] {
            definition.aliases.map { [ExactName($0.key), ExactName($0.value)] }.sorted {
                $0.lexicographicallyPrecedes($1)
            }
        }
        let left = lhs.workspace
        let right = rhs.workspace
        return names(left.match.groupTypes) == names(right.match.groupTypes)
            && names(left.match.groupIDs) == names(right.match.groupIDs)
            && names(left.match.productIDs) == names(right.match.productIDs)
            && Set(left.adminRoles.map(ExactName.init)) == Set(right.adminRoles.map(ExactName.init))
            && left.requires.environments == right.requires.environments
            && Set(left.requires.entitlements.map(ExactName.init))
                == Set(right.requires.entitlements.map(ExactName.init))
            && (left.match.productIDs == nil || aliases(lhs) == aliases(rhs))
    }

    /// The candidates an entry of which counts for the workspace: any entry without a product
    /// condition or with `"*"`, else one whose product, as the definition's document sees it,
    /// is named.
    private static func relevant(
        _ definition: Definition,
        _ candidates: [ScenarioSpace.Candidate],
        _ environment: StoreEnvironment
    ) -> Set<Int> {
        guard case .oneOf(let products)? = definition.workspace.match.productIDs else {
            return Set(candidates.indices)
        }
        let named = Set(products.map(ExactName.init))
        return Set(
            candidates.indices.filter { index in
                let productID = candidates[index].entry.productID
                let seen =
                    environment == .sandbox ? definition.aliases.valueExactly(for: productID) ?? productID : productID
                return named.contains(ExactName(seen))
            }
        )
    }

    /// The relevant candidates whose role makes the group an administrator.
    private static func admin(
        _ definition: Definition,
        _ relevant: Set<Int>,
        _ candidates: [ScenarioSpace.Candidate]
    ) -> Set<Int> {
        let roles = Set(definition.workspace.adminRoles.map(ExactName.init))
        return relevant.filter { roles.contains(ExactName(candidates[$0].entry.role.rawValue)) }
    }

    /// A membership as a number: 0 none, 1 member, 2 administrator.
    private static func number(_ role: WorkspaceMembership.Role?) -> Int32 {
        switch role {
        case nil: 0
        case .member?: 1
        case .admin?: 2
        }
    }

    private static func role(_ number: Int32) -> WorkspaceMembership.Role? {
        number == 2 ? .admin : number == 1 ? .member : nil
    }

    /// The minimal differing scenarios as rows, each workspace's and change's rows passed through
    /// `merge` on their own, in workspace order.
    ///
    /// - Throws: A `GroupPolicyError` with code `limitExceeded` when more than
    ///   ``PolicyDiffer/maximumChanges`` minimal changes are found.
    func rows(
        merging merge: ([PolicyDiff.WorkspaceRow]) -> [PolicyDiff.WorkspaceRow]
    ) throws(GroupPolicyError) -> [PolicyDiff.WorkspaceRow] {
        guard !changed.isEmpty else { return [] }
        var positions: [ExactName: Int] = [:]
        for (position, id) in workspaceIDs.enumerated() { positions[ExactName(id)] = position }
        var before = [Int32](repeating: 0, count: workspaceIDs.count)
        var after = [Int32](repeating: 0, count: workspaceIDs.count)
        func memberships(_ policy: Policy, _ scenario: DiffPlan.Visit, _ plan: DiffPlan, into roles: inout [Int32]) {
            for index in changed { roles[index] = 0 }
            let group = GroupEntry(
                groupID: scenario.groupID,
                groupType: scenario.groupType,
                roles: scenario.entries.map { plan.candidates[$0].entry }
            )
            let decision = policy.evaluate(GetCustomerGroupsResponse(groups: [group]), in: scenario.context)
            for membership in decision.workspaces {
                if let position = positions[ExactName(membership.workspace.id)] {
                    roles[position] = max(roles[position], Self.number(membership.role))
                }
            }
        }
        let changes = try MinimalChanges.find(
            in: plans,
            entitlementSets: entitlementSets,
            limit: PolicyDiffer.changeLimit,
            of: "workspace"
        ) { plan, scenario, differing in
            memberships(old, scenario, plan, into: &before)
            memberships(new, scenario, plan, into: &after)
            for index in changed where before[index] != after[index] {
                differing.append(Int32(index) * 9 + before[index] * 3 + after[index])
            }
        }
        let rows = DiffPlan.rows(of: changes, in: plans, entitlementSets: entitlementSets, merging: merge) {
            code,
            environment,
            scenario in
            PolicyDiff.WorkspaceRow(
                workspace: workspaceIDs[Int(code / 9)],
                oldRole: Self.role(code % 9 / 3),
                newRole: Self.role(code % 3),
                environment: environment,
                groupType: scenario.groupType,
                groupID: scenario.groupID,
                roles: scenario.roles,
                entitlements: scenario.entitlements,
                example: scenario.example
            )
        }
        return rows.sorted(by: PolicyDiffMerger.precedes)
    }
}
