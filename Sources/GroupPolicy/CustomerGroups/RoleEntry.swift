/// The customer's role for one product of the app within a group (Apple's `RoleEntry`).
public struct RoleEntry: Hashable, Sendable, Codable {
    /// The product the group gives the customer (`productId`).
    public var productID: String
    /// The customer's role for that product.
    public var role: Role

    /// Creates a role entry.
    public init(productID: String, role: Role) {
        self.productID = productID
        self.role = role
    }

    enum CodingKeys: String, CodingKey {
        case productID = "productId"
        case role
    }
}
