// swift-format-ignore-file
// A stub of swift-nio's NIOCore for Scripts/check-doc-snippets: only what the DocC snippets use,
// with NIOCore's signatures. Nothing here runs.

/// NIOCore's byte buffer.
public struct ByteBuffer: Sendable, Hashable {
    public init() {}
    public init(bytes: some Sequence<UInt8>) {}
}

extension String {
    /// NIOCore's `String(buffer:)`.
    public init(buffer: ByteBuffer) { self.init() }
}

extension Array where Element == UInt8 {
    /// NIOCore's `Array(buffer:)`.
    public init(buffer: ByteBuffer) { self.init() }
}

/// NIOCore's future.
public final class EventLoopFuture<Value: Sendable>: @unchecked Sendable {
    public init() {}
    /// NIOCore's `get()`: waits for the value.
    public func get() async throws -> Value { fatalError("a stub") }
}
