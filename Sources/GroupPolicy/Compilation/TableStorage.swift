/// Immutable table memory that the per-request paths read through a plain buffer pointer.
///
/// Reading a Swift array from a request path costs reference counting and, through nested
/// `withUnsafeBufferPointer` closures, defeats inlining; a compiled table never changes, so it is
/// copied once into memory this object owns and frees. The pointer stays valid for as long as the
/// object lives, and readers get it only through a live owner (a `let` of a compiled document).
final class TableStorage<Element: BitwiseCopyable>: @unchecked Sendable {
    // @unchecked: the memory is written once, in init, before the object is shared, and only read
    // afterwards; elements are plain values.
    let buffer: UnsafeBufferPointer<Element>

    init(_ elements: [Element]) {
        let memory = UnsafeMutableBufferPointer<Element>.allocate(capacity: elements.count)
        _ = memory.initialize(from: elements)
        buffer = UnsafeBufferPointer(memory)
    }

    deinit {
        buffer.deallocate()
    }

    var count: Int { buffer.count }
}
