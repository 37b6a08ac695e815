/// The body of Apple's Get Customer Groups answer: every group the customer belongs to for the
/// app (empty when none).
///
/// Decode it from the bytes Apple sent with ``init(jsonBytes:limits:fileName:)`` (strict, fast, with JSON
/// paths in its errors) or through `Codable`; encode it back to Apple's shape with ``jsonBytes()``.
public struct GetCustomerGroupsResponse: Hashable, Sendable, Codable {
    /// The groups, in Apple's order.
    public var groups: [GroupEntry]

    /// Creates a response.
    public init(groups: [GroupEntry]) {
        self.groups = groups
    }

    /// The sandbox placeholder group id Apple answers with for a sandbox customer who is in no
    /// `CONSUMER` group.
    public static let sandboxPlaceholderGroupID = "900000000000000000"

    /// Apple's documented sandbox placeholder answer, exactly.
    public static let sandboxPlaceholder = GetCustomerGroupsResponse(groups: [
        GroupEntry(
            groupID: sandboxPlaceholderGroupID,
            groupType: .organization,
            roles: [
                RoleEntry(productID: "example.productId.one", role: .admin),
                RoleEntry(productID: "example.productId.two", role: .unassigned),
            ]
        )
    ])
}
