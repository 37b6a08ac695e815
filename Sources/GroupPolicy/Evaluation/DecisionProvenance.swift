/// A decision's provenance as compact indices into the compiled policy and the response: what
/// evaluation records, from which ``Decision``'s arrays and JSON are built when read.
///
/// Indices: `capability` into the catalog, `document` into the policy's documents, `rule` into that
/// document's rules, `group` into `groups` (merged groups, in response order), `entryGroup` and
/// `entryRole` into the response (`response.groups[entryGroup].roles[entryRole]`, -1 for a
/// group-level grant).
struct DecisionProvenance: Sendable {
    /// One merged group of the response.
    struct Group: Sendable {
        /// The index in the response of the group's first occurrence (its id and type apply).
        var first: Int32
        /// ``conflictingTypes`` and ``placeholder``.
        var flags: UInt32
        /// The surviving capabilities: the bit set itself for a catalog of one word, otherwise the
        /// offset of the group's words in ``DecisionProvenance/words``.
        var bits: UInt64

        /// The group repeats with another `groupType` (a note says so).
        static let conflictingTypes: UInt32 = 1
        /// The sandbox placeholder ignored in Production (a note says so).
        static let placeholder: UInt32 = 2
    }

    /// One grant: a capability that survived in a group, a rule that granted it there and the
    /// role entry it matched through.
    struct Grant: Sendable {
        var capability: Int32
        var document: Int32
        var rule: Int32
        var group: Int32
        var entryGroup: Int32
        var entryRole: Int32
    }

    /// One denial: a capability a deny rule removed from a group where it was granted.
    struct Denial: Sendable {
        var capability: Int32
        var document: Int32
        var rule: Int32
        var group: Int32
    }

    /// One workspace membership: the document's workspace definition, the group, the role.
    struct Membership: Sendable {
        var document: Int32
        var workspace: Int32
        var group: Int32
        var isAdmin: Bool
    }

    var groups: [Group] = []
    /// The groups' capability words when the catalog needs more than one word per set.
    var words: [UInt64] = []
    var grants: [Grant] = []
    var denials: [Denial] = []
    var memberships: [Membership] = []
}
