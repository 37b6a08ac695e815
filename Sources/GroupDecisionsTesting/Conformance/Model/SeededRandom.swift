/// SplitMix64 (Steele, Lea and Flood): the same numbers for the same seed on every platform and
/// toolchain, which `SystemRandomNumberGenerator` cannot give, so a failing sequence replays.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A number in `0..<count`, the same for the same state everywhere (the standard library's
    /// `random(in:using:)` is free to change how it draws).
    mutating func below(_ count: Int) -> Int {
        Int(next() % UInt64(count))
    }

    /// One of `elements`, which must not be empty.
    mutating func pick<Element>(_ elements: [Element]) -> Element {
        elements[below(elements.count)]
    }

    /// `true` with probability `percent` in 100.
    mutating func chance(_ percent: Int) -> Bool {
        below(100) < percent
    }
}
