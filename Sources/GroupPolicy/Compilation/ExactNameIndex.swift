/// Names numbered in first-seen order, told apart by their bytes: the interning compilation does.
///
/// Lookups hash the `String` (no copy of its bytes); `String` equality is canonical equivalence,
/// so a hit is confirmed byte for byte, and a spelling that differs only that way is kept apart
/// (two spellings are two names to the tables, which compare bytes).
struct ExactNameIndex {
    private(set) var names: [String] = []
    private var byString: [String: Int] = [:]
    /// Spellings canonically equivalent to an earlier name but with other bytes (rare).
    private var bySpelling: [[UInt8]: Int] = [:]

    /// The name's number, if it was inserted.
    func index(of name: String) -> Int? {
        guard let index = byString[name] else { return nil }
        if names[index].isExactly(name) { return index }
        return bySpelling[Array(name.utf8)]
    }

    /// Numbers the name if it is new.
    mutating func insert(_ name: String) {
        guard let index = byString[name] else {
            byString[name] = names.count
            names.append(name)
            return
        }
        guard !names[index].isExactly(name) else { return }
        let spelling = Array(name.utf8)
        guard bySpelling[spelling] == nil else { return }
        bySpelling[spelling] = names.count
        names.append(name)
    }
}
