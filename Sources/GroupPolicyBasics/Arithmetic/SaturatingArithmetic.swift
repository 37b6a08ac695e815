/// Multiplication that stops at `Int.max` (or `Int.min`, for a negative product) instead of
/// trapping: sizes that are only compared with a bound (a table's cells, a scenario space's
/// candidates) need no more.
///
/// The result is the true product clamped to `Int`, whatever the order of the factors: a zero
/// factor makes it zero even after the factors before it overflowed.
package func saturatingProduct(_ factors: Int...) -> Int {
    var product = 1
    var negative = false
    var overflowed = false
    for factor in factors {
        if factor == 0 { return 0 }
        negative = negative != (factor < 0)
        // Once past the bound, every later nonzero factor keeps the magnitude past it; only the
        // sign can still change.
        guard !overflowed else { continue }
        let (result, overflow) = product.multipliedReportingOverflow(by: factor)
        if overflow { overflowed = true } else { product = result }
    }
    guard overflowed else { return product }
    return negative ? Int.min : Int.max
}

/// Addition that stops at `Int.max` (or `Int.min`, for a negative sum) instead of trapping (see
/// ``saturatingProduct(_:)``).
package func saturatingSum(_ lhs: Int, _ rhs: Int) -> Int {
    let (result, overflow) = lhs.addingReportingOverflow(rhs)
    // Only two operands of the same sign overflow, past the bound of that sign.
    guard overflow else { return result }
    return rhs < 0 ? Int.min : Int.max
}
