import Foundation
package import GroupPolicy

/// The customers' groups of the serving tests, in one place: each a response as the client
/// decodes Apple's Get Customer Groups, with the family policy that grants them.
package enum Families {
    /// The bundled family-sharing policy, loaded afresh.
    package static func policies() throws -> PolicyStore {
        try PolicyStore(contentsOf: TestFiles.packageRoot.appending(path: "Policies/family-sharing.json").path)
    }

    /// What the family policy grants a member of a CONSUMER group.
    package static let capabilities = ["family.shared-lists", "family.space"]

    /// Family group g1 (`CONSUMER`), the group of most tests' customers.
    package static let g1 = GroupEntry(groupID: "g1", groupType: .consumer)
    /// Family group g2.
    package static let g2 = GroupEntry(groupID: "g2", groupType: .consumer)

    /// A customer in family group g1.
    package static let member = GetCustomerGroupsResponse(groups: [g1])
    /// Apple's body for ``member``.
    package static let memberBody = #"{"groups":[{"groupId":"g1","groupType":"CONSUMER"}]}"#
    /// A customer in family group g2 only.
    package static let memberOfG2 = GetCustomerGroupsResponse(groups: [g2])
    /// A customer in no group.
    package static let noGroups = GetCustomerGroupsResponse(groups: [])

    /// Customers `c0` to `c<count - 1>`, each in group g1.
    package static func customers(_ count: Int) -> [String: GetCustomerGroupsResponse] {
        Dictionary(uniqueKeysWithValues: (0..<count).map { ("c\($0)", member) })
    }

    /// A group of `type` whose customer holds `roles`, each for product `pro`.
    package static func group(_ id: String, _ type: GroupType, _ roles: [Role] = []) -> GroupEntry {
        GroupEntry(groupID: id, groupType: type, roles: roles.map { RoleEntry(productID: "pro", role: $0) })
    }
}
