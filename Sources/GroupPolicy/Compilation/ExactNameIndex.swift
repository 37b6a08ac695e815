/// Names numbered in first-seen order, told apart by their bytes: the interning compilation does
/// (two spellings that `String` calls equal are two names to the tables, which compare bytes).
struct ExactNameIndex {
    private(set) var names: [String] = []
    private var interner = ByteInterner()

    /// The name's number, if it was inserted.
    func index(of name: String) -> Int? {
        interner.index(of: name).map(Int.init)
    }

    /// Numbers the name if it is new.
    mutating func insert(_ name: String) {
        _ = number(name)
    }

    /// The name's number, numbering it first if it is new.
    mutating func number(_ name: String) -> Int {
        let before = interner.count
        let index = interner.insert(name)
        if interner.count > before { names.append(name) }
        return Int(index)
    }
}
