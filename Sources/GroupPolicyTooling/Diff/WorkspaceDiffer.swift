import GroupPolicy
import GroupPolicyBasics

/// Finds the minimal scenarios in which a workspace membership differs between two versions of a
/// policy: a customer's group forms a workspace in one version and not in the other, or forms it
/// as an administrator in one and as a member in the other.
///
/// Memberships are evaluated by the engine (`Policy.evaluate(_:in:)`), over the scenario space
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

    /// A workspace's definition in one version, and its document's position in the space (whose
    /// sandbox aliases it sees products through).
    private struct Definition {
        var document: Int
        var workspace: WorkspaceDefinition
    }

    /// - Parameters:
    ///   - old: The version before the change.
    ///   - new: The version after the change.
    ///   - space: Both versions' scenario space, old documents first (built, not over its limit).
    init(old: Policy, new: Policy, space: ScenarioSpace) {
        self.old = old
        self.new = new
        let oldDocuments = old.documents
        let newDocuments = new.documents
        var definitions: [[ExactName: Definition]] = [[:], [:]]
        for (side, documents) in [oldDocuments, newDocuments].enumerated() {
            for (index, document) in documents.enumerated() {
                for workspace in document.workspaces where definitions[side][ExactName(workspace.id)] == nil {
                    definitions[side][ExactName(workspace.id)] = Definition(
                        document: side == 0 ? index : oldDocuments.count + index,
                        workspace: workspace
                    )
                }
            }
        }
        let ids = Set(definitions[0].keys).union(definitions[1].keys).sorted()
        workspaceIDs = ids.map(\.string)
        changed = ids.indices.filter { index in
            guard let before = definitions[0][ids[index]], let after = definitions[1][ids[index]] else { return true }
            return !Self.alike(before, after, space)
        }
        guard !changed.isEmpty else {
            // Every workspace is defined alike: nothing to enumerate, nothing to estimate.
            entitlementSets = []
            plans = []
            scenarioCount = 0
            work = 0
            return
        }

        var sets: Set<[ExactName]> = [[]]
        for index in changed {
            let requirements = (0..<2).compactMap { definitions[$0][ids[index]]?.workspace.requires.entitlements }
            for entitlements in requirements { sets.insert(Set(entitlements.map(ExactName.init)).sorted()) }
            sets.insert(Set(requirements.joined().map(ExactName.init)).sorted())
        }
        entitlementSets = sets.sorted(by: smallerFirst).map { $0.map(\.string) }

        let oldWork = ScenarioWork(
            documents: oldDocuments,
            capabilityCount: old.capabilities.count
        )
        let newWork = ScenarioWork(
            documents: newDocuments,
            capabilityCount: new.capabilities.count
        )
        // A full decision under each version: its overhead, and every workspace definition of both.
        let decisionCost = saturatingSum(
            2 * ScenarioWork.decisionOverhead,
            saturatingProduct(definitions[0].count + definitions[1].count, ScenarioWork.workspaceCost)
        )
        var plans = DiffPlans(
            entitlementSets: entitlementSets.count,
            old: oldWork,
            new: newWork,
            perScenario: decisionCost
        )
        for environment in StoreEnvironment.allCases {
            let candidates = space.candidates(in: environment)
            var singles = Set<Int>()
            var firsts = Set<Int>()
            var seconds = Set<Int>()
            // The candidates a workspace's products (and administrator roles) find, through the
            // space's indexes and its document's aliases, by number (`nil`: every candidate).
            // Workspaces with the same conditions, seen through alike aliases, share one number,
            // and each number's candidates are looked up, and added to the singles, once.
            var numbers: [FoundKey: Int] = [:]
            var sets: [Set<Int>] = []
            var added: Set<Int> = []
            func found(_ definition: Definition?, adminRoles: Bool) -> Int? {
                guard let definition else { return -1 }
                var match = definition.workspace.match
                match.groupTypes = nil
                match.groupIDs = nil
                match.roles = adminRoles ? .oneOf(definition.workspace.adminRoles) : nil
                guard match.isRoleLevel else { return nil }
                let key = FoundKey(view: space.aliasView(of: definition.document), match: match)
                if let known = numbers[key] { return known }
                sets.append(space.candidates(matching: [(definition.document, match)], in: environment))
                numbers[key] = sets.count - 1
                return sets.count - 1
            }
            func positions(_ number: Int?) -> Set<Int>? {
                number.map { $0 < 0 ? [] : sets[$0] }
            }
            for index in changed {
                let versions = (0..<2).map { definitions[$0][ids[index]] }
                let relevant = versions.map { found($0, adminRoles: false) }
                let admin = versions.map { found($0, adminRoles: true) ?? -1 }
                for side in 0..<2 {
                    guard let definition = versions[side] else { continue }
                    // One entry shows a membership appearing or going: with a product condition,
                    // one it names; without, one that makes its group an administrator.
                    let single = definition.workspace.match.productIDs == nil ? admin[side] : relevant[side]
                    if let single, added.insert(single).inserted { singles.formUnion(positions(single) ?? []) }
                    // Administrator in one version, member in the other: an entry that makes the
                    // group an administrator here and is not relevant there, beside one relevant
                    // there that does not make it an administrator.
                    let other = 1 - side
                    guard let otherRelevant = positions(relevant[other]),
                        versions[other]?.workspace.match.productIDs != nil,
                        relevant[other] != relevant[side]
                    else { continue }
                    let first = (positions(admin[side]) ?? []).subtracting(otherRelevant)
                    guard !first.isEmpty else { continue }
                    firsts.formUnion(first)
                    seconds.formUnion(otherRelevant.subtracting(positions(admin[other]) ?? []))
                }
            }
            plans.append(
                DiffPlan(
                    environment: environment,
                    candidates: candidates,
                    groupTypes: space.groupTypes,
                    groupIDs: space.groupIDs(in: environment),
                    selection: EntrySelection(
                        includesEmpty: true,
                        singles: singles,
                        pairFirst: firsts,
                        pairSecond: seconds
                    )
                )
            )
        }
        self.plans = plans.plans
        scenarioCount = plans.scenarioCount
        work = plans.work
    }

    /// What a workspace's candidates depend on: its product and role conditions, by their bytes,
    /// and the aliases its document sees them through.
    private struct FoundKey: Hashable {
        var view: Int
        var products: [ExactName]?
        var anyProduct: Bool
        var roles: [ExactName]?

        init(view: Int, match: MatchCondition) {
            self.view = view
            anyProduct = match.productIDs == .any
            products = match.productIDs.flatMap { $0 == .any ? nil : $0.values.map(ExactName.init) }
            roles = match.roles.map { $0.values.map(ExactName.init) }
        }
    }

    /// Whether two definitions of one workspace form it alike in every scenario: the same match,
    /// administrator roles and requirements, by their bytes, and the same aliases where the
    /// match names products.
    private static func alike(_ lhs: Definition, _ rhs: Definition, _ space: ScenarioSpace) -> Bool {
        // The same values by their bytes, in any order (in the same order, as an unchanged
        // definition has them, without hashing).
        func same(_ lhs: [String], _ rhs: [String]) -> Bool {
            if lhs.count == rhs.count, zip(lhs, rhs).allSatisfy({ $0.isExactly($1) }) { return true }
            return Set(lhs.map(ExactName.init)) == Set(rhs.map(ExactName.init))
        }
        func same(_ lhs: ValueCondition?, _ rhs: ValueCondition?) -> Bool {
            switch (lhs, rhs) {
            case (nil, nil), (.any?, .any?): true
            case (.oneOf(let left)?, .oneOf(let right)?): same(left, right)
            default: false
            }
        }
        let left = lhs.workspace
        let right = rhs.workspace
        return same(left.match.groupTypes, right.match.groupTypes)
            && same(left.match.groupIDs, right.match.groupIDs)
            && same(left.match.productIDs, right.match.productIDs)
            && same(left.adminRoles, right.adminRoles)
            && left.requires.environments == right.requires.environments
            && same(left.requires.entitlements, right.requires.entitlements)
            && (left.match.productIDs == nil || space.aliasView(of: lhs.document) == space.aliasView(of: rhs.document))
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
        func memberships(
            _ policy: Policy,
            _ scenario: DiffPlan.Visit,
            _ entries: [Int],
            _ plan: DiffPlan,
            into roles: inout [Int32]
        ) {
            for index in changed { roles[index] = 0 }
            let group = GroupEntry(
                groupID: scenario.groupID,
                groupType: scenario.groupType,
                roles: entries.map { plan.candidates[$0].entry }
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
            of: "workspace"
        ) { plan, scenario, entries, differing in
            memberships(old, scenario, entries, plan, into: &before)
            memberships(new, scenario, entries, plan, into: &after)
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
        return PolicyDiffMerger.sorted(rows)
    }
}
