/// Multiplication that stops at `Int.max` instead of trapping: sizes that are only compared with a
/// bound (a table's cells, a scenario space's candidates) need no more.
package func saturatingProduct(_ factors: Int...) -> Int {
    var product = 1
    for factor in factors {
        let (result, overflow) = product.multipliedReportingOverflow(by: factor)
        if overflow { return Int.max }
        product = result
    }
    return product
}

/// Addition that stops at `Int.max` (see ``saturatingProduct(_:)``).
package func saturatingSum(_ lhs: Int, _ rhs: Int) -> Int {
    let (result, overflow) = lhs.addingReportingOverflow(rhs)
    return overflow ? Int.max : result
}
