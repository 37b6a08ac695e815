/// A value of one of Apple's open vocabularies (``GroupType``, ``Role``): a raw string, with
/// static members for the values this version knows.
///
/// Values Apple adds later decode and keep their raw string, so a response never fails to decode
/// for a value this version has not heard of; ``isKnown`` tells them apart. A conforming type
/// stores ``rawValue``, declares ``init(rawValue:)`` and lists ``knownValues``; the rest comes
/// from here: creating one from a string or a literal, its description (the raw value), and
/// `Codable` as the bare string.
public protocol OpenVocabulary: RawRepresentable, Hashable, Sendable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
where RawValue == String {
    /// The value exactly as Apple sends it.
    var rawValue: String { get }

    /// Creates a value from Apple's raw value, known or not.
    init(rawValue: String)

    /// The values this version knows.
    static var knownValues: [Self] { get }
}

extension OpenVocabulary {
    /// Creates a value from Apple's raw value, known or not.
    public init(_ rawValue: String) { self.init(rawValue: rawValue) }

    /// Creates a value from a string literal.
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// Whether this version knows the value (it is one of ``knownValues``).
    public var isKnown: Bool { Self.knownValues.contains(self) }

    /// The raw value.
    public var description: String { rawValue }

    /// Decodes the raw string.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the raw string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
