// swift-format-ignore-file
// A stub of swift-metrics for Scripts/check-doc-snippets: only what the DocC snippets use, with
// swift-metrics' signatures. Nothing here runs.

/// swift-metrics' counter.
public final class Counter: Sendable {
    public init(label: String, dimensions: [(String, String)] = []) {}
    public func increment() {}
}

/// swift-metrics' timer.
public final class Timer: Sendable {
    public init(label: String, dimensions: [(String, String)] = []) {}
    public func recordNanoseconds(_ duration: Int64) {}
}
