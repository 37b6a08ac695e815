/// SplitMix64: the simulation's random numbers, the same on every platform for one seed.
struct SimulationRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator for `seed`, on a stream of its own for each `stream` (the script, the App Store).
    init(seed: UInt64, stream: UInt64 = 0) {
        state = seed ^ (stream &* 0xD1B5_4A32_D192_ED03)
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `true` with probability `share`.
    mutating func chance(_ share: Double) -> Bool {
        share > 0 && Double.random(in: 0..<1, using: &self) < share
    }

    /// A duration drawn evenly between two, in whole milliseconds.
    mutating func duration(_ range: ClosedRange<Double>) -> Duration {
        .milliseconds(Int64((Double.random(in: range, using: &self) * 1000).rounded()))
    }
}
