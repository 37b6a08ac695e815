// swift-format-ignore-file
// A stub of swift-log for Scripts/check-doc-snippets: only what the DocC snippets use, with
// swift-log's signatures. Nothing here runs.

/// swift-log's logger.
public struct Logger: Sendable {
    public struct Message: ExpressibleByStringInterpolation, Sendable {
        public init(stringLiteral value: String) {}
        public init(stringInterpolation: DefaultStringInterpolation) {}
    }
    public enum MetadataValue: ExpressibleByStringInterpolation, Sendable {
        case string(String)
        public init(stringLiteral value: String) { self = .string(value) }
        public init(stringInterpolation: DefaultStringInterpolation) { self = .string(stringInterpolation.description) }
    }
    public typealias Metadata = [String: MetadataValue]

    public init(label: String) {}

    public func debug(_ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil) {}
    public func info(_ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil) {}
    public func notice(_ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil) {}
    public func warning(_ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil) {}
    public func error(_ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil) {}
}
