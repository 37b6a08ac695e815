/// A stable digest of a policy set's files: 64-bit FNV-1a, as 16 lower-case hex digits.
///
/// Not cryptographic (the runtime has no crypto): it tells versions apart in logs and decisions,
/// it does not authenticate them. For each file in load order it hashes the length of its name
/// (8 bytes, little-endian), the name's UTF-8 bytes (the last path component, so moving the
/// directory keeps the revision), the length of its content (8 bytes, little-endian) and the
/// content's bytes.
struct PolicyRevision {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    private mutating func add(_ byte: UInt8) {
        state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
    }

    private mutating func add(length: Int) {
        var value = UInt64(length)
        for _ in 0..<8 {
            add(UInt8(truncatingIfNeeded: value))
            value >>= 8
        }
    }

    /// Adds one file.
    mutating func add(fileName: String, bytes: some Collection<UInt8>) {
        let name = fileName.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? fileName
        add(length: name.utf8.count)
        for byte in name.utf8 { add(byte) }
        add(length: bytes.count)
        for byte in bytes { add(byte) }
    }

    /// The digest as 16 hex digits.
    var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for shift in stride(from: 60, through: 0, by: -4) {
            text.append(digits[Int((state >> UInt64(shift)) & 0xf)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
