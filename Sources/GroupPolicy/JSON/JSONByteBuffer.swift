import GroupPolicyBasics

/// Writes into a buffer of fixed capacity; a write that would overrun it is dropped and marks the
/// output as overflowed (the caller then falls back to the general writer).
struct JSONByteBuffer: JSONByteOutput {
    let base: UnsafeMutableRawPointer?
    let capacity: Int
    var count = 0
    var overflowed = false

    /// A buffer of `capacity` bytes at `base` (which may be `nil` only when `capacity` is 0).
    init(base: UnsafeMutablePointer<UInt8>?, capacity: Int) {
        self.base = base.map { UnsafeMutableRawPointer($0) }
        self.capacity = base == nil ? 0 : capacity
    }

    /// Copies short pieces (most of them: punctuation, keys, ids) with overlapping word moves
    /// instead of a call to `memcpy`.
    @inline(__always)
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        let length = bytes.count
        guard let source = bytes.baseAddress, let base, length <= capacity - count else {
            if bytes.count > 0 { overflowed = true }
            return
        }
        let target = base + count
        count += length
        if length >= 8 {
            guard length <= 16 else {
                target.copyMemory(from: source, byteCount: length)
                return
            }
            let head = source.loadUnaligned(as: UInt64.self)
            let tail = source.loadUnaligned(fromByteOffset: length - 8, as: UInt64.self)
            target.storeBytes(of: head, as: UInt64.self)
            target.storeBytes(of: tail, toByteOffset: length - 8, as: UInt64.self)
        } else if length >= 4 {
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: length - 4, as: UInt32.self)
            target.storeBytes(of: head, as: UInt32.self)
            target.storeBytes(of: tail, toByteOffset: length - 4, as: UInt32.self)
        } else {
            for index in 0..<length {
                target.storeBytes(
                    of: source.load(fromByteOffset: index, as: UInt8.self),
                    toByteOffset: index,
                    as: UInt8.self
                )
            }
        }
    }

    @inline(__always)
    mutating func append(byte: UInt8) {
        guard let base, count < capacity else {
            overflowed = true
            return
        }
        base.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    /// Reads the string's UTF-8 here rather than through `JSONWriter.withUTF8`: release builds left
    /// that generic function, from another module, as a call per string in every Decision's JSON.
    @inline(__always)
    mutating func appendEscaped(_ text: String, plain: Bool) {
        let appended: Void? = text.utf8.withContiguousStorageIfAvailable { appendContent($0, plain: plain) }
        if appended == nil { Array(text.utf8).withUnsafeBufferPointer { appendContent($0, plain: plain) } }
    }

    /// Appends a string's content: as it is when `plain` or when no byte needs an escape, otherwise
    /// through the package's one escaper.
    @inline(__always)
    private mutating func appendContent(_ bytes: UnsafeBufferPointer<UInt8>, plain: Bool) {
        if plain || !JSONWriter.needsEscaping(bytes) {
            append(UnsafeRawBufferPointer(bytes))
        } else {
            JSONWriter.forEachEscapedRun(bytes) { append($0) }
        }
    }
}
