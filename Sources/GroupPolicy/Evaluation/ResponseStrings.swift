/// The response's strings the JSON writes, escaped once per encoding into one buffer: per group its
/// id and type, then (with provenance) per role entry its product id and role.
struct ResponseStrings {
    let bytes: UnsafeRawBufferPointer
    /// String `k` is `bytes[offsets[k]..<offsets[k + 1]]`.
    let offsets: UnsafeBufferPointer<Int32>
    /// The index of each group's first string (its id).
    let groupBase: UnsafeBufferPointer<Int32>

    @inline(__always)
    private func string(_ index: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[Int(offsets[index])..<Int(offsets[index + 1])])
    }

    func groupID(_ group: Int) -> UnsafeRawBufferPointer { string(Int(groupBase[group])) }
    func groupType(_ group: Int) -> UnsafeRawBufferPointer { string(Int(groupBase[group]) + 1) }
    func productID(group: Int, role: Int) -> UnsafeRawBufferPointer { string(Int(groupBase[group]) + 2 + 2 * role) }
    func role(group: Int, role: Int) -> UnsafeRawBufferPointer { string(Int(groupBase[group]) + 3 + 2 * role) }

    /// Calls `body` with each string in order.
    static func forEach(in groups: [GroupEntry], entries: Bool, _ body: (String) -> Void) {
        for group in groups {
            body(group.groupID)
            body(group.groupType.rawValue)
            guard entries else { continue }
            for entry in group.roles {
                body(entry.productID)
                body(entry.role.rawValue)
            }
        }
    }
}
