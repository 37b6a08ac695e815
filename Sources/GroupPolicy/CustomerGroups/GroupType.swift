/// The kind of a group (`groupType`), an open vocabulary: values Apple adds later decode and keep
/// their raw string.
public struct GroupType: OpenVocabulary {
    /// The value exactly as Apple sends it.
    public let rawValue: String

    /// Creates a group type from Apple's raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `ORGANIZATION`: an organization bought seats and assigned one to the customer.
    ///
    /// Seats come through Volume Purchasing or Apple Business or School Manager. Its entries carry
    /// roles.
    public static let organization = GroupType(rawValue: "ORGANIZATION")
    /// `CONSUMER`: a subscriber bought seats through Group Purchases and invited the customer.
    ///
    /// Its entries carry no roles.
    public static let consumer = GroupType(rawValue: "CONSUMER")

    /// The values this version knows.
    public static let knownValues: [GroupType] = [.organization, .consumer]
}
