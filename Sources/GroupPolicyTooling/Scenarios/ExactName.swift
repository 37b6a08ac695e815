#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A name that is equal to, hashed and ordered against another by its UTF-8 bytes, as the engine
/// compares names.
///
/// `String`'s `==`, its hashing and its `<` follow Unicode canonical equivalence: a precomposed
/// "é" and "e" followed by a combining accent are one string to a `Set<String>`. The engine
/// compares bytes, so a policy can name both spellings, and a response can send either, and they
/// are two values. Every set, dictionary key and sort of names in the tooling uses this type, so
/// that a scenario space, a diff, an invariant or a test expectation sees the values the engine
/// sees: collected into a set of `String`s, one spelling would hide the other, and `check` could
/// prove a capability never granted that `eval` grants.
struct ExactName: Hashable, Comparable, Sendable {
    /// The name.
    let string: String

    init(_ string: String) {
        self.string = string
    }

    /// The same bytes.
    static func == (lhs: ExactName, rhs: ExactName) -> Bool {
        lhs.string.utf8.count == rhs.string.utf8.count && compare(lhs, rhs) == 0
    }

    /// `String`'s hash: the same bytes are the same string, so they hash alike; canonically
    /// equivalent spellings share a hash and are then told apart by ``==(_:_:)``.
    func hash(into hasher: inout Hasher) {
        hasher.combine(string)
    }

    /// `String`'s order (Unicode scalars, after canonical normalization), then, between two
    /// spellings of one string, their bytes: a total order, and the one `String` gives any other
    /// pair.
    static func < (lhs: ExactName, rhs: ExactName) -> Bool {
        if lhs.string < rhs.string { return true }
        if rhs.string < lhs.string { return false }
        return compare(lhs, rhs) < 0
    }

    /// The bytes compared in place, as `memcmp` orders them.
    private static func compare(_ lhs: ExactName, _ rhs: ExactName) -> Int32 {
        var left = lhs.string
        var right = rhs.string
        return left.withUTF8 { left in
            right.withUTF8 { right in
                let common = min(left.count, right.count)
                if common > 0, let a = left.baseAddress, let b = right.baseAddress {
                    let order = memcmp(a, b, common)
                    if order != 0 { return order }
                }
                return left.count == right.count ? 0 : left.count < right.count ? -1 : 1
            }
        }
    }
}

extension Sequence<String> {
    /// The names, each spelling once (by bytes), in order (see ``ExactName/<(_:_:)``).
    func sortedUniqueExactly() -> [String] {
        Set(map(ExactName.init)).sorted().map(\.string)
    }
}
