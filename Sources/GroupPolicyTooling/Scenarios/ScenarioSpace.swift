import GroupPolicy
import GroupPolicyBasics
import Synchronization

/// The scenario space (the DocC article "The scenario space") for a set of policy documents: the
/// values each dimension takes, and the role entries a scenario can hold in each environment.
///
/// A diff builds one space from both versions' documents, so that a value either version names is
/// in it. Beyond the contract's values, every `groupType` and `role` a document names literally is
/// in the space too (otherwise rules on such values would be invisible; for policies that name no
/// such value the space is exactly the contract's). Like the contract, the space has *one* unnamed
/// product, so a customer holding two products the policy never names, one as `ADMIN` and one as
/// `NONE`, is outside it: a known limit, documented in the README. The unnamed values
/// (``freshGroupType`` and the like) collide with no named value.
///
/// Products are counted after sandbox aliasing: each *slot* is a product as the rules see it, and
/// a scenario holds at most one role entry per slot. In `Sandbox` a slot's entry is sent under a
/// product id that aliases to it; in `Production` under the slot's own id, or under an alias
/// source that a match names literally (the only way a rule can see that id in `Production`).
struct ScenarioSpace: Sendable {
    /// A role entry a scenario can hold, and the product slot it occupies.
    struct Candidate: Sendable, Hashable {
        var slot: Int
        var entry: RoleEntry
    }

    let documents: [PolicyDocument]
    /// `ORGANIZATION`, `CONSUMER`, the other named types (sorted), then the unnamed type.
    let groupTypes: [String]
    /// The named group ids (sorted), then the unnamed id; ``groupIDs(in:)`` adds the placeholder.
    let groupIDs: [String]
    /// `ADMIN`, `NONE`, the other named roles (sorted), then the unnamed role.
    let roles: [String]
    /// Each product slot's id as the rules see it (sorted), then the unnamed product.
    let slots: [String]
    let freshGroupType: String
    let freshGroupID: String
    let freshProductIDs: [String]
    let freshRole: String
    private let productionCandidates: [Candidate]
    private let sandboxCandidates: [Candidate]
    /// How many role entries the larger environment offers (products x roles, each production id
    /// counted), whether or not they were built.
    let candidateCount: Int
    /// Whether ``candidateCount`` was over the maximum given at creation, so that no candidates
    /// were built: the space is then too large for any budget and is reported as such.
    let isOverLimit: Bool
    /// Per document, a number it shares with the documents whose sandbox aliases are the same,
    /// byte for byte (documents that alias alike see role entries alike).
    private let aliasViews: [Int]
    /// The candidate indexes built so far, shared by every lookup of this space: a check looks
    /// each invariant's matches up in the same few (one per environment and alias view), and an
    /// index costs a pass over every candidate, up to a million, so it is built once per space.
    private let indexCache = IndexCache()

    /// The most role entries (products x roles) a space holds per environment: a million.
    ///
    /// No hand-written policy approaches it (it takes a thousand products and a thousand roles).
    /// Larger spaces are not built: invariants over them are reported over budget, and a diff
    /// over them is refused.
    static let maximumCandidates = 1_000_000

    /// Builds the space of `documents`.
    ///
    /// - Parameters:
    ///   - documents: The documents whose names make up the space.
    ///   - maximumCandidates: The most role entries to build per environment. Each is a
    ///     scenario of the full space, so a space with more entries than a scenario budget is over
    ///     it; a caller passes the budget (at most ``maximumCandidates``) and a huge space costs no
    ///     memory.
    init(documents: [PolicyDocument], maximumCandidates: Int = Int.max) {
        self.documents = documents
        var viewByAliases: [[[UInt8]]: Int] = [:]
        aliasViews = documents.map { document in
            let key = document.productAliases.map { Array($0.key.utf8) + [0] + Array($0.value.utf8) }
                .sorted { $0.lexicographicallyPrecedes($1) }
            if let view = viewByAliases[key] { return view }
            viewByAliases[key] = viewByAliases.count
            return viewByAliases.count - 1
        }
        // Names are collected by their bytes (``ExactName``): two spellings the engine tells apart
        // are two values of the space.
        var types: Set<ExactName> = []
        var ids: Set<ExactName> = []
        var aliasNames: [ExactName] = []
        var matchedProducts: Set<ExactName> = []
        var namedRoles: Set<ExactName> = []
        func collect(_ values: [String]?, into set: inout Set<ExactName>) {
            for value in values ?? [] { set.insert(ExactName(value)) }
        }
        func collect(_ match: MatchCondition) {
            collect(match.groupTypes?.values, into: &types)
            collect(match.groupIDs?.values, into: &ids)
            collect(match.productIDs?.values, into: &matchedProducts)
            collect(match.roles?.values, into: &namedRoles)
        }
        // Sandbox aliases of every document; where two documents alias one id, the first wins.
        var aliases: [ExactName: ExactName] = [:]
        for document in documents {
            for rule in document.rules { collect(rule.match) }
            for workspace in document.workspaces {
                collect(workspace.match)
                collect(workspace.adminRoles, into: &namedRoles)
            }
            for invariant in document.invariants { collect(invariant.match) }
            let sorted = document.productAliases.map { (ExactName($0.key), ExactName($0.value)) }.sorted { $0.0 < $1.0 }
            for (source, target) in sorted {
                aliasNames.append(source)
                aliasNames.append(target)
                if aliases[source] == nil { aliases[source] = target }
            }
        }
        // The matched names, then the aliases' (copying the set rather than hashing millions of
        // names a second time).
        var products = matchedProducts
        products.formUnion(aliasNames)

        freshGroupType = Self.fresh("UNNAMED_TYPE", avoiding: types)
        freshGroupID = Self.fresh(
            "unnamed-group",
            avoiding: ids.union([ExactName(GetCustomerGroupsResponse.sandboxPlaceholderGroupID)])
        )
        freshRole = Self.fresh("UNNAMED_ROLE", avoiding: namedRoles)
        freshProductIDs = [Self.fresh("unnamed.product", avoiding: products)]

        let knownTypes = GroupType.knownValues.map { ExactName($0.rawValue) }
        groupTypes = (knownTypes + types.subtracting(knownTypes).sorted()).map(\.string) + [freshGroupType]
        groupIDs = ids.sorted().map(\.string) + [freshGroupID]
        let knownRoles = Role.knownValues.map { ExactName($0.rawValue) }
        roles = (knownRoles + namedRoles.subtracting(knownRoles).sorted()).map(\.string) + [freshRole]

        // Count the slots and the role entries from the aliases alone, before building anything:
        // a product is its own slot unless it is an alias source (whose slot is its target, itself
        // a product), and a target that is itself a source is a slot all the same. So a policy
        // naming millions of products is found over the limit without sorting them.
        let sources = Set(aliases.filter { $0.key != $0.value }.keys)
        let sourceTargets = Set(sources.compactMap { aliases[$0] })
        let slotCount = products.count - sources.count + sourceTargets.intersection(sources).count + 1
        // In Production a slot is also seen under each source a match names literally.
        let namedSources = sources.filter(matchedProducts.contains).count
        candidateCount = saturatingProduct(saturatingSum(slotCount, namedSources), roles.count)
        isOverLimit = candidateCount > maximumCandidates
        guard !isOverLimit else {
            slots = freshProductIDs
            productionCandidates = []
            sandboxCandidates = []
            return
        }
        let canonical = Set(products.map { aliases[$0] ?? $0 }).sorted()
        slots = canonical.map(\.string) + freshProductIDs
        // Alias sources per slot, sorted.
        var sourcesBySlot: [ExactName: [ExactName]] = [:]
        for (source, target) in aliases where source != target { sourcesBySlot[target, default: []].append(source) }
        var production: [Candidate] = []
        var sandbox: [Candidate] = []
        for (slot, product) in (canonical + [ExactName(freshProductIDs[0])]).enumerated() {
            let sources = (sourcesBySlot[product] ?? []).sorted()
            let productionIDs = ([product] + sources.filter(matchedProducts.contains)).map(\.string)
            let sandboxID = (aliases[product] == nil ? product : sources.first ?? product).string
            for role in roles {
                for id in productionIDs {
                    production.append(Candidate(slot: slot, entry: RoleEntry(productID: id, role: Role(role))))
                }
                sandbox.append(Candidate(slot: slot, entry: RoleEntry(productID: sandboxID, role: Role(role))))
            }
        }
        productionCandidates = production
        sandboxCandidates = sandbox
    }

    /// `base`, or `base_2`, `base_3`… : the first that is not in `taken`.
    static func fresh(_ base: String, avoiding taken: Set<ExactName>) -> String {
        guard taken.contains(ExactName(base)) else { return base }
        var suffix = 2
        while taken.contains(ExactName("\(base)_\(suffix)")) { suffix += 1 }
        return "\(base)_\(suffix)"
    }

    /// A number a document shares with the documents whose sandbox aliases are the same, byte
    /// for byte.
    func aliasView(of document: Int) -> Int {
        aliasViews[document]
    }

    /// The role entries a scenario in `environment` can hold (one at most per slot).
    func candidates(in environment: StoreEnvironment) -> [Candidate] {
        environment == .production ? productionCandidates : sandboxCandidates
    }

    /// The group ids of `environment`: in `Sandbox` also Apple's placeholder.
    func groupIDs(in environment: StoreEnvironment) -> [String] {
        let placeholder = GetCustomerGroupsResponse.sandboxPlaceholderGroupID
        guard environment == .sandbox, !groupIDs.contains(where: { $0.isExactly(placeholder) }) else { return groupIDs }
        return groupIDs + [placeholder]
    }

    /// The candidates (indices into ``candidates(in:)``) whose entry satisfies the role-level part
    /// of any of `matches`, each seen through its own document's sandbox aliases.
    ///
    /// The work grows with the matches' lengths and the candidates they find, not with matches x
    /// candidates: equal role-level conditions (seen through equal aliases) are looked at once, and
    /// candidates are found through indexes by product and by role. Names are compared by their
    /// bytes, as matching compares them.
    func candidates(
        matching matches: [(document: Int, match: MatchCondition)],
        in environment: StoreEnvironment
    ) -> Set<Int> {
        let candidates = candidates(in: environment)
        // The found positions, as a set from the start: the work follows the candidates found, not
        // the million a space may hold (a bit per candidate would be a pass over all of them).
        var result: Set<Int> = []
        func mark(_ position: Int) { result.insert(position) }
        var seen: Set<RoleLevelKey> = []
        for (documentIndex, match) in matches where match.isRoleLevel && result.count < candidates.count {
            // Documents with the same aliases see entries alike, so they share an index (in
            // Production no document's aliases apply).
            let view = environment == .production ? -1 : aliasViews[documentIndex]
            guard seen.insert(RoleLevelKey(view: view, products: match.productIDs, roles: match.roles)).inserted
            else { continue }
            let index = indexCache.index(IndexKey(view: view, environment: environment)) {
                CandidateIndex(
                    candidates,
                    productID: { Self.ruleProductID($0, documents[documentIndex], environment) }
                )
            }
            let roles: [String]? = match.roles.flatMap { $0 == .any ? nil : $0.values }
            // A long role list is looked up in a set; a short one is scanned.
            let roleSet: Set<ExactName>? = roles.flatMap { $0.count > 8 ? Set($0.map(ExactName.init)) : nil }
            func accepts(_ position: Int) -> Bool {
                guard let roles else { return true }
                let role = candidates[position].entry.role.rawValue
                return roleSet?.contains(ExactName(role)) ?? roles.contains { $0.isExactly(role) }
            }
            switch match.productIDs {
            case .oneOf(let products)?:
                for product in products {
                    for position in index.byProduct[ExactName(product)] ?? [] where accepts(position) { mark(position) }
                }
            case nil, .any?:
                if let roles {
                    for role in roles {
                        for position in index.byRole[ExactName(role)] ?? [] { mark(position) }
                    }
                } else {
                    for position in candidates.indices { mark(position) }
                }
            }
        }
        return result
    }

    /// Which index: an environment, seen through one alias view (`-1` in Production).
    private struct IndexKey: Hashable {
        var view: Int
        var environment: StoreEnvironment
    }

    /// The indexes of one space, built on first use.
    private final class IndexCache: Sendable {
        private let indexes = Mutex<[IndexKey: CandidateIndex]>([:])

        func index(_ key: IndexKey, build: () -> CandidateIndex) -> CandidateIndex {
            indexes.withLock { indexes in
                if let known = indexes[key] { return known }
                let index = build()
                indexes[key] = index
                return index
            }
        }
    }

    /// A match's role-level conditions, as seen through one document's aliases.
    ///
    /// It holds the match's own lists (no copy of a list of a hundred thousand names) and compares
    /// them by bytes.
    private struct RoleLevelKey: Hashable {
        var view: Int
        var products: [String]?
        var roles: [String]?

        init(view: Int, products: ValueCondition?, roles: ValueCondition?) {
            self.view = view
            // `nil` stands for any value; an absent condition is any value too.
            self.products = products.flatMap { $0 == .any ? nil : $0.values }
            self.roles = roles.flatMap { $0 == .any ? nil : $0.values }
        }

        static func == (lhs: RoleLevelKey, rhs: RoleLevelKey) -> Bool {
            func same(_ left: [String]?, _ right: [String]?) -> Bool {
                guard let left, let right else { return left == nil && right == nil }
                return left.count == right.count && zip(left, right).allSatisfy { $0.isExactly($1) }
            }
            return lhs.view == rhs.view && same(lhs.products, rhs.products) && same(lhs.roles, rhs.roles)
        }

        /// `String`'s hash: the same bytes hash alike.
        func hash(into hasher: inout Hasher) {
            hasher.combine(view)
            hasher.combine(products)
            hasher.combine(roles)
        }
    }

    /// One environment's candidates by the product id the rules see and by role.
    private struct CandidateIndex {
        var byProduct: [ExactName: [Int]] = [:]
        var byRole: [ExactName: [Int]] = [:]

        init(_ candidates: [Candidate], productID: (String) -> String) {
            for (position, candidate) in candidates.enumerated() {
                byProduct[ExactName(productID(candidate.entry.productID)), default: []].append(position)
                byRole[ExactName(candidate.entry.role.rawValue), default: []].append(position)
            }
        }
    }

    /// The values a condition accepts, compared byte for byte as matching does; a long list is
    /// looked up in a set, so filtering costs the lengths of both lists, not their product.
    static func values(_ values: [String], acceptedBy condition: ValueCondition?) -> [String] {
        switch condition {
        case nil, .any?:
            return values
        case .oneOf(let accepted)? where accepted.count <= 8:
            return values.filter { value in accepted.contains { $0.isExactly(value) } }
        case .oneOf(let accepted)?:
            let names = Set(accepted.map(ExactName.init))
            return values.filter { names.contains(ExactName($0)) }
        }
    }

    /// The product id a document's rules see for an entry's product id.
    static func ruleProductID(
        _ productID: String,
        _ document: PolicyDocument,
        _ environment: StoreEnvironment
    )
        -> String
    {
        environment == .sandbox ? document.productAliases.valueExactly(for: productID) ?? productID : productID
    }
}
