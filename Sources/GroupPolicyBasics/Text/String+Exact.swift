extension String {
    /// Whether the two strings are the same bytes.
    ///
    /// Policy names and Apple's values are compared exactly (see the DocC article "Policy file
    /// format", section "Match"). `String`'s `==` compares by Unicode canonical equivalence, under
    /// which a precomposed "é" equals "e" followed by a combining accent; the compiled tables compare
    /// bytes, so every other comparison on the request path must too, or a rule could match through
    /// one path and not the other (a deny naming one spelling missed while a grant applies).
    @inlinable
    package func isExactly(_ other: String) -> Bool {
        // The counts first (constant time for native strings), then the bytes in place: the
        // generic `elementsEqual` of two UTF-8 views walks them through iterators. Native strings
        // lend their bytes without a copy; only a bridged one is copied.
        guard utf8.count == other.utf8.count else { return false }
        let inPlace = utf8.withContiguousStorageIfAvailable { left in
            other.utf8.withContiguousStorageIfAvailable { right in bytesEqual(left, right) }
        }
        if let inPlace, let equal = inPlace { return equal }
        var mine = self
        var theirs = other
        return mine.withUTF8 { left in theirs.withUTF8 { right in bytesEqual(left, right) } }
    }
}

extension Set<String> {
    /// Whether the set holds these exact bytes (``Swift/String/isExactly(_:)``): a set of strings
    /// holds at most one of several canonically equivalent spellings, found by hashing, then
    /// compared byte for byte.
    @inlinable
    package func containsExactly(_ value: String) -> Bool {
        guard let index = firstIndex(of: value) else { return false }
        return self[index].isExactly(value)
    }
}

extension Dictionary where Key == String {
    /// The value under exactly these bytes (see ``Swift/Set/containsExactly(_:)``).
    @inlinable
    package func valueExactly(for key: String) -> Value? {
        guard let index = index(forKey: key), self[index].key.isExactly(key) else { return nil }
        return self[index].value
    }
}

/// Whether two byte buffers hold the same bytes: eight at a time, then the tail (every name of a
/// large policy is compared at least once while it compiles).
@inlinable @inline(__always)
package func bytesEqual(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>) -> Bool {
    let count = left.count
    guard count == right.count else { return false }
    guard count > 0, let leftStart = left.baseAddress, let rightStart = right.baseAddress else { return true }
    let leftRaw = UnsafeRawPointer(leftStart)
    let rightRaw = UnsafeRawPointer(rightStart)
    var offset = 0
    while offset + 8 <= count {
        if leftRaw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            != rightRaw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        {
            return false
        }
        offset += 8
    }
    while offset < count {
        if leftStart[offset] != rightStart[offset] { return false }
        offset += 1
    }
    return true
}
