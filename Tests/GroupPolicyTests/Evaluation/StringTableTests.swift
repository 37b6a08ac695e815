import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

/// The interning table: exact lookups on both sides of its packed (up to 16 bytes) and hashed
/// (longer) representations.
@Suite struct StringTableTests {
    /// Keys of every length from 0 to 40 bytes, ASCII and not, each found with its value; every
    /// one-byte change of a key (at each position) and every one-byte extension or truncation is
    /// not found, unless it happens to be another key.
    @Test func findsExactlyTheKeys() {
        var random = SeededGenerator(seed: 7)
        var keys: [String] = [""]
        for length in 1...40 {
            for _ in 0..<3 {
                let scalars = (0..<length).map { _ -> Character in
                    random.next() % 7 == 0 ? "\u{e9}" : Character(Unicode.Scalar(UInt8(97 + random.next() % 26)))
                }
                keys.append(String(scalars))
            }
        }
        let table = StringTable(keys.enumerated().map { (key: $0.element, value: Int32($0.offset)) })
        let positions = Dictionary(keys.enumerated().map { ($0.element, Int32($0.offset)) }) { first, _ in first }
        #expect(table.count == positions.count)
        for (key, value) in positions {
            #expect(table.value(for: key) == value, "key \(key)")
            var utf8 = Array(key.utf8)
            for index in utf8.indices {
                let original = utf8[index]
                utf8[index] = original ^ 0x01
                let changed = String(decoding: utf8, as: UTF8.self)
                #expect(table.value(for: changed) == positions[changed], "\(key) changed at \(index)")
                utf8[index] = original
            }
            #expect(table.value(for: key + "x") == positions[key + "x"], "\(key) extended")
            if !key.isEmpty {
                let truncated = String(key.dropLast())
                #expect(table.value(for: truncated) == positions[truncated], "\(key) truncated")
            }
        }
    }

    /// A repeated key keeps its first value; lookups in an empty table find nothing.
    @Test func firstValueWinsAndEmptyTablesAreEmpty() {
        let table = StringTable([(key: "ADMIN", value: 1), (key: "ADMIN", value: 2), (key: "NONE", value: 3)])
        #expect(table.count == 2)
        #expect(table.value(for: "ADMIN") == 1)
        #expect(table.value(for: "NONE") == 3)
        #expect(table.value(for: "MEMBER") == nil)
        let empty = StringTable([])
        #expect(empty.isEmpty)
        #expect(empty.value(for: "") == nil)
        #expect(empty.value(for: "ADMIN") == nil)
    }
}
