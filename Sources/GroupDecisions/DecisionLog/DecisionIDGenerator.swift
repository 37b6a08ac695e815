import Foundation
import GroupPolicyBasics

/// The ids of served decisions: UUIDv7 (RFC 9562), unique and ordered by time, so a support ticket
/// quoting one finds its line in the decision log, and sorting ids sorts decisions.
///
/// A 48-bit Unix time in milliseconds, a 12-bit counter from a random start below 2048, and 62
/// random bits; when the counter would pass 4095 or the clock steps back, the time moves one
/// millisecond ahead (RFC 9562, section 6.2, method 1). The article "Observing decisions",
/// section "Matching a support ticket to the log", gives the uniqueness argument.
///
/// The random bits come from a xoshiro256** stream (``RandomStream``): a call to the system's
/// generator is a system call (5 to 7 µs on a busy host), which two per id would have made the
/// most expensive part of a decision. One generator (``shared``) serves the process, so its
/// services order their ids together.
package final class DecisionIDGenerator: Sendable {
    /// The process's generator, on the wall clock and the system's random numbers.
    package static let shared = DecisionIDGenerator()

    /// The largest value the 12-bit counter holds.
    static let counterLimit: UInt16 = 0xFFF
    /// The largest random start of a millisecond's counter: the top bit stays clear, so at least
    /// 2048 ids fit before a rollover.
    static let counterStartMask: UInt64 = 0x7FF

    static let idsPerSeed = 65_536

    private struct State {
        var milliseconds: UInt64 = 0
        var counter: UInt16 = 0
        var stream = RandomStream()
    }

    private let state = Locked(State())
    private let milliseconds: @Sendable () -> UInt64
    private let random: (@Sendable () -> UInt64)?

    /// A generator on `milliseconds` (the Unix time) and `random` (64 bits a call; `nil` for its
    /// own stream).
    package init(
        milliseconds: @escaping @Sendable () -> UInt64 = DecisionIDGenerator.wallClockMilliseconds,
        random: (@Sendable () -> UInt64)? = nil
    ) {
        self.milliseconds = milliseconds
        self.random = random
    }

    /// The next id as 36 characters, lowercase hex in groups of 8-4-4-4-12.
    package func next() -> String {
        let (high, low) = nextValue()
        return Self.text(high: high, low: low)
    }

    /// The next id's 16 bytes.
    package func nextBytes() -> [UInt8] {
        let (high, low) = nextValue()
        return [high, low].flatMap { word in (0..<8).map { UInt8(truncatingIfNeeded: word >> UInt64(56 - 8 * $0)) } }
    }

    /// The next id as its high and low 64 bits: time, version and counter; variant and random bits.
    private func nextValue() -> (high: UInt64, low: UInt64) {
        let now = milliseconds() & 0xFFFF_FFFF_FFFF
        return state.withLock { state in
            let start = UInt16((random?() ?? state.stream.next()) & Self.counterStartMask)
            let tail = random?() ?? state.stream.next()
            if now > state.milliseconds {
                state.milliseconds = now
                state.counter = start
            } else if state.counter < Self.counterLimit {
                state.counter += 1
            } else {
                // Out of counter in this millisecond (or the clock went back): borrow the next one.
                state.milliseconds = (state.milliseconds + 1) & 0xFFFF_FFFF_FFFF
                state.counter = start
            }
            return (
                high: state.milliseconds << 16 | 0x7000 | UInt64(state.counter & 0x0FFF),
                low: 0x8000_0000_0000_0000 | tail & 0x3FFF_FFFF_FFFF_FFFF
            )
        }
    }

    /// An id's 128 bits as lowercase hex in groups of 8-4-4-4-12, written in place (an id is made
    /// per decision, so it allocates only its string).
    static func text(high: UInt64, low: UInt64) -> String {
        String(unsafeUninitializedCapacity: 36) { buffer in
            var index = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    buffer[index] = UInt8(ascii: "-")
                    index += 1
                }
                let word = nibble < 16 ? high : low
                let value = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * (nibble % 16))) & 0x0F
                buffer[index] = value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
                index += 1
            }
            return index
        }
    }

    /// The wall clock's Unix time in milliseconds (zero before 1970).
    package static func wallClockMilliseconds() -> UInt64 {
        let milliseconds = (Date().timeIntervalSince1970 * 1000).rounded(.down)
        return milliseconds > 0 ? UInt64(milliseconds) : 0
    }

    /// xoshiro256** (Blackman and Vigna), seeded from `SystemRandomNumberGenerator` before its
    /// first draw and again every ``DecisionIDGenerator/idsPerSeed`` ids (two draws each).
    struct RandomStream {
        private var state: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        private var drawsLeft = 0

        mutating func next() -> UInt64 {
            if drawsLeft == 0 {
                var system = SystemRandomNumberGenerator()
                repeat {
                    state = (system.next(), system.next(), system.next(), system.next())
                } while state == (0, 0, 0, 0)  // the one state xoshiro cannot leave
                drawsLeft = 2 * DecisionIDGenerator.idsPerSeed
            }
            drawsLeft -= 1
            let result = rotateLeft(state.1 &* 5, by: 7) &* 9
            let shifted = state.1 << 17
            state.2 ^= state.0
            state.3 ^= state.1
            state.1 ^= state.2
            state.0 ^= state.3
            state.2 ^= shifted
            state.3 = rotateLeft(state.3, by: 45)
            return result
        }

        private func rotateLeft(_ value: UInt64, by count: UInt64) -> UInt64 {
            (value << count) | (value >> (64 - count))
        }
    }
}
