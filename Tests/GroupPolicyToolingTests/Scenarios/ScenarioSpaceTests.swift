import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

/// The scenario space's dimensions for small policies, worked out by hand from the DocC article
/// "The scenario space": the values a policy names, the known values, and one unnamed value each.
@Suite struct ScenarioSpaceTests {
    static func space(_ json: String) throws -> ScenarioSpace {
        ScenarioSpace(documents: try policy(json).compiled.documents.map(\.document))
    }

    static let tiny = """
        { "format": "group-policy/v1", "id": "tiny", "capabilities": { "a": "a" },
          "rules": [ { "id": "r", "capabilities": ["a"],
                       "match": { "groupType": "ENTERPRISE", "productId": "p1", "role": "ADMIN" } } ] }
        """

    /// A tiny policy's dimensions, value by value.
    ///
    /// Group types: the two known, the named `ENTERPRISE`, the unnamed type. Roles: the two known
    /// (`ADMIN` is also named), the unnamed role. Products: `p1` and the unnamed product.
    @Test func aTinyPolicysDimensionsHoldTheNamedKnownAndUnnamedValues() throws {
        let space = try Self.space(Self.tiny)
        #expect(space.groupTypes == ["ORGANIZATION", "CONSUMER", "ENTERPRISE", "UNNAMED_TYPE"])
        #expect(space.groupIDs == ["unnamed-group"])
        #expect(space.groupIDs(in: .production) == ["unnamed-group"])
        #expect(space.groupIDs(in: .sandbox) == ["unnamed-group", "900000000000000000"])
        #expect(space.roles == ["ADMIN", "NONE", "UNNAMED_ROLE"])
        #expect(space.slots == ["p1", "unnamed.product"])
        #expect(space.freshGroupType == "UNNAMED_TYPE")
        #expect(space.freshGroupID == "unnamed-group")
        #expect(space.freshRole == "UNNAMED_ROLE")
        #expect(space.freshProductIDs == ["unnamed.product"])
    }

    /// One candidate role entry per slot and role: 2 slots x 3 roles = 6 in each environment.
    @Test func aTinyPolicyHasSixCandidateEntriesPerEnvironment() throws {
        let space = try Self.space(Self.tiny)
        let production = space.candidates(in: .production).map { "\($0.slot) \($0.entry.productID) \($0.entry.role)" }
        #expect(
            production == [
                "0 p1 ADMIN", "0 p1 NONE", "0 p1 UNNAMED_ROLE",
                "1 unnamed.product ADMIN", "1 unnamed.product NONE", "1 unnamed.product UNNAMED_ROLE",
            ]
        )
        #expect(space.candidates(in: .sandbox).count == 6)
    }

    /// A policy that names the unnamed values' spellings pushes them aside.
    @Test func unnamedValuesCollideWithNoNamedValue() throws {
        let space = try Self.space(
            """
            { "format": "group-policy/v1", "id": "p", "capabilities": { "a": "a" },
              "rules": [ { "id": "r", "capabilities": ["a"],
                           "match": { "groupType": "UNNAMED_TYPE", "groupId": "unnamed-group",
                                      "productId": "unnamed.product", "role": "UNNAMED_ROLE" } } ] }
            """
        )
        #expect(space.freshGroupType == "UNNAMED_TYPE_2")
        #expect(space.freshGroupID == "unnamed-group_2")
        #expect(space.freshRole == "UNNAMED_ROLE_2")
        #expect(space.freshProductIDs == ["unnamed.product_2"])
        #expect(space.groupTypes == ["ORGANIZATION", "CONSUMER", "UNNAMED_TYPE", "UNNAMED_TYPE_2"])
        #expect(space.slots == ["unnamed.product", "unnamed.product_2"])
    }

    /// A sandbox alias source is no slot of its own: the rules see `p1` either way, so both
    /// environments send the slot's own id (the source is not named by any match).
    @Test func aSandboxAliasSourceIsNoSlotOfItsOwn() throws {
        let space = try Self.space(
            """
            { "format": "group-policy/v1", "id": "p", "capabilities": { "a": "a" },
              "rules": [ { "id": "r", "capabilities": ["a"], "match": { "productId": "p1" } } ],
              "sandbox": { "productAliases": { "sb": "p1" } } }
            """
        )
        #expect(space.slots == ["p1", "unnamed.product"])
        #expect(Set(space.candidates(in: .sandbox).filter { $0.slot == 0 }.map(\.entry.productID)) == ["p1"])
        #expect(Set(space.candidates(in: .production).filter { $0.slot == 0 }.map(\.entry.productID)) == ["p1"])
    }

    /// The role entries counted from the aliases alone (before anything is built, so that a
    /// policy naming millions of products is refused at once) equal the entries built, for
    /// random alias maps with chains, self-aliases, sources named or not by a match, and two
    /// documents aliasing one id; and a space over the limit reports the same count.
    @Test(arguments: 0..<4) func theCountedRoleEntriesAreTheBuiltOnes(seed: UInt64) throws {
        var random = RandomInputs(seed: seed)
        let names = ["p0", "p1", "p2", "p3", "p4", "p5"]
        for _ in 0..<50 {
            let documents = try (0..<2).map { index in
                let aliases = (0..<random.int(0...4)).map { _ in
                    #""\#(random.pick(names))": "\#(random.pick(names))""#
                }
                var seen: Set<String> = []
                let distinct = aliases.filter { seen.insert(String($0.prefix { $0 != ":" })).inserted }
                let json = """
                    { "format": "group-policy/v1", "id": "d\(index)", "capabilities": { "a": "a" },
                      "rules": [ { "id": "r", "capabilities": ["a"],
                                   "match": { "productId": \(random.jsonList(random.subset(names))),
                                              "role": \(random.jsonList(random.subset(["ADMIN", "R1", "R2"]))) } } ],
                      "sandbox": { "productAliases": { \(distinct.joined(separator: ", ")) } } }
                    """
                return try policy(json).compiled.documents[0].document
            }
            let space = ScenarioSpace(documents: documents)
            let built = max(space.candidates(in: .production).count, space.candidates(in: .sandbox).count)
            #expect(space.candidateCount == built)
            #expect(!space.isOverLimit)
            let refused = ScenarioSpace(documents: documents, maximumCandidates: built - 1)
            #expect(refused.isOverLimit)
            #expect(refused.candidateCount == built)
            #expect(refused.candidates(in: .production).isEmpty)
        }
    }

    /// Two slots of two candidates each: the empty set, 4 single entries and the 4 pairs across
    /// slots (a pair within one slot is not a scenario), each unordered pair once: 9.
    @Test func anEntrySelectionCountsAndVisitsEachEntrySetOnce() {
        let candidates = [0, 0, 1, 1].map {
            ScenarioSpace.Candidate(slot: $0, entry: RoleEntry(productID: "p\($0)", role: .admin))
        }
        let all = [0, 1, 2, 3]
        let selection = EntrySelection(includesEmpty: true, singles: all, pairFirst: all, pairSecond: all)
        #expect(selection.count(candidates) == 9)
        var visited: [[Int]] = []
        selection.forEach(candidates) {
            visited.append($0)
            return true
        }
        #expect(visited.count == 9)
        #expect(Set(visited) == [[], [0], [1], [2], [3], [0, 2], [0, 3], [1, 2], [1, 3]])
        #expect(EntrySelection.emptyOnly.count(candidates) == 1)
    }
}
