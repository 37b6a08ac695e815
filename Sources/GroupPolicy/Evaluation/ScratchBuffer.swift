/// Calls `body` with uninitialized working memory for `capacity` values: on the stack when small,
/// otherwise on the heap (a large stack request makes the runtime look up the thread's stack
/// bounds, which costs more than the allocation).
@inline(__always)
func withScratchBuffer<Element, Result>(
    of type: Element.Type,
    capacity: Int,
    _ body: (UnsafeMutableBufferPointer<Element>) -> Result
) -> Result {
    if capacity * MemoryLayout<Element>.stride <= 1024 {
        return withUnsafeTemporaryAllocation(of: type, capacity: capacity, body)
    }
    let buffer = UnsafeMutableBufferPointer<Element>.allocate(capacity: capacity)
    defer { buffer.deallocate() }
    return body(buffer)
}
