import Testing

@testable import GroupPolicyBasics

/// Sizes and work estimates that stop at the bound instead of trapping: exact in range, at the
/// bound on overflow, and the bound of the true result's sign.
@Suite struct SaturatingArithmeticTests {
    @Test(
        arguments: [
            ([], 1),
            ([7], 7),
            ([3, 4, 5], 60),
            ([-3, 4], -12),
            ([-3, -4], 12),
            ([0, Int.max], 0),
            ([Int.max, 1], Int.max),
            ([Int.min, 1], Int.min),
            ([Int.max / 2, 2], Int.max - 1),
            ([1 << 31, 1 << 31], 1 << 62),
            ([Int.min / 2, 2], Int.min),
        ] as [([Int], Int)]
    )
    func productInRangeIsExact(factors: [Int], expected: Int) {
        #expect(product(of: factors) == expected)
    }

    @Test(
        arguments: [
            ([Int.max, 2], Int.max),
            ([1 << 32, 1 << 31], Int.max),
            ([Int.max, Int.max, Int.max], Int.max),
            ([Int.min, -1], Int.max),
            ([Int.min, -2], Int.max),
            ([Int.min, 2], Int.min),
            ([Int.max, -2], Int.min),
            ([-2, Int.max], Int.min),
            ([Int.max, 2, -1], Int.min),
            ([Int.max, 2, -1, -1], Int.max),
        ] as [([Int], Int)]
    )
    func productThatOverflowsStopsAtTheBoundOfItsSign(factors: [Int], expected: Int) {
        #expect(product(of: factors) == expected)
    }

    /// A zero factor makes the product zero wherever it comes, even after the factors before it
    /// overflowed: a table with no products has no cells, however many layers and classes it has.
    @Test(
        arguments: [
            [Int.max, 2, 0],
            [0, Int.max, 2],
            [Int.max, 0, 2],
            [1 << 40, 1 << 40, 1 << 40, 0],
            [Int.min, -1, 0],
        ]
    )
    func aZeroFactorMakesTheProductZeroAfterAnOverflow(factors: [Int]) {
        #expect(product(of: factors) == 0)
    }

    @Test(
        arguments: [
            (2, 3, 5),
            (-2, -3, -5),
            (Int.max, 0, Int.max),
            (Int.max - 1, 1, Int.max),
            (Int.max, Int.min, -1),
            (Int.min, 0, Int.min),
            (Int.min + 1, -1, Int.min),
            (Int.max, 1, Int.max),
            (1, Int.max, Int.max),
            (Int.max, Int.max, Int.max),
            (Int.min, -1, Int.min),
            (-1, Int.min, Int.min),
            (Int.min, Int.min, Int.min),
        ]
    )
    func sumIsExactInRangeAndStopsAtTheBoundOfItsSign(lhs: Int, rhs: Int, sum: Int) {
        #expect(saturatingSum(lhs, rhs) == sum)
    }
}

/// `saturatingProduct` (variadic) called with the elements of `factors`, at most four.
private func product(of factors: [Int]) -> Int {
    switch factors.count {
    case 0: return saturatingProduct()
    case 1: return saturatingProduct(factors[0])
    case 2: return saturatingProduct(factors[0], factors[1])
    case 3: return saturatingProduct(factors[0], factors[1], factors[2])
    case 4: return saturatingProduct(factors[0], factors[1], factors[2], factors[3])
    default:
        Issue.record("product(of:) takes at most four factors, not \(factors.count)")
        return 0
    }
}
