/// A customer's role for one product in an organization group (`role`), an open vocabulary:
/// values Apple adds later decode and keep their raw string.
public struct Role: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Creates a role from Apple's raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a role from Apple's raw value, known or not.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    /// Creates a role from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// `ADMIN`: the customer administers the group for that product.
    public static let admin = Role(rawValue: "ADMIN")
    /// `NONE`: the customer holds a seat and does not administer.
    ///
    /// Named `unassigned` because `.none` would collide with `Optional.none`. Apple has no `MEMBER`.
    public static let unassigned = Role(rawValue: "NONE")

    /// The values this version knows.
    public static let knownValues: [Role] = [.admin, .unassigned]

    /// Whether this version knows the value.
    public var isKnown: Bool { self == .admin || self == .unassigned }

    /// The raw value.
    public var description: String { rawValue }

    /// Decodes the raw string.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    /// Encodes the raw string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
