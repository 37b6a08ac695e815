/// A table of cells under construction: each cell refers to a scratch pair (1-based; 0 = empty).
struct CellTableBuilder {
    var cells: [UInt32]

    init(count: Int) {
        cells = [UInt32](repeating: 0, count: count)
    }

    mutating func add(cell: Int, bits: RuleBits, deny: Bool, pool: inout PairPool) {
        if cells[cell] == 0 { cells[cell] = UInt32(pool.newScratchPair() + 1) }
        pool.or(scratchPair: Int(cells[cell]) - 1, bits: bits, deny: deny)
    }
}
