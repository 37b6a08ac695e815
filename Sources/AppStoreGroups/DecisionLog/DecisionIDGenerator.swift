import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The ids of served decisions: UUIDv7 (RFC 9562), unique and ordered by time, so a support ticket
/// quoting one finds its line in the decision log, and sorting ids sorts decisions.
///
/// Layout, 128 bits: a 48-bit Unix time in milliseconds, the version `7`, a 12-bit counter in
/// `rand_a`, the variant `10`, and 62 random bits in `rand_b`. Within a process, ids only ever
/// increase: in one millisecond the counter goes up by one from a random start below 2048 (so at
/// least 2048 ids fit in each millisecond), and when it would pass 4095, or when the wall clock
/// steps back, the id's time moves one millisecond ahead of the last one rather than repeating or
/// going back (RFC 9562, section 6.2, method 1). Across processes, two ids made in the same
/// millisecond differ unless their counters and their 62 fresh random bits all agree: about one
/// chance in 2^62 per pair, which is the whole fleet's uniqueness argument. The random bits come
/// from `SystemRandomNumberGenerator`, the operating system's generator.
///
/// One generator serves the process (``shared``) so that every service in it orders its ids with
/// the others'; it holds no data of any service, only the last millisecond and counter.
package final class DecisionIDGenerator: Sendable {
    /// The process's generator, on the wall clock and the system's random numbers.
    package static let shared = DecisionIDGenerator()

    /// The largest value the 12-bit counter holds.
    static let counterLimit: UInt16 = 0xFFF
    /// The largest random start of a millisecond's counter: the top bit stays clear, so at least
    /// 2048 ids fit before a rollover.
    static let counterStartMask: UInt64 = 0x7FF

    private struct State {
        var milliseconds: UInt64 = 0
        var counter: UInt16 = 0
    }

    private let state = Locked(State())
    private let milliseconds: @Sendable () -> UInt64
    private let random: @Sendable () -> UInt64

    /// Creates a generator.
    ///
    /// - Parameters:
    ///   - milliseconds: The Unix time in milliseconds. Default: the wall clock.
    ///   - random: 64 random bits per call. Default: `SystemRandomNumberGenerator`.
    package init(
        milliseconds: @escaping @Sendable () -> UInt64 = DecisionIDGenerator.wallClockMilliseconds,
        random: @escaping @Sendable () -> UInt64 = DecisionIDGenerator.systemRandom
    ) {
        self.milliseconds = milliseconds
        self.random = random
    }

    /// The next id as 36 characters, lowercase hex in groups of 8-4-4-4-12.
    package func next() -> String {
        Self.text(nextBytes())
    }

    /// The next id's 16 bytes.
    package func nextBytes() -> [UInt8] {
        let now = milliseconds() & 0xFFFF_FFFF_FFFF
        let start = UInt16(random() & Self.counterStartMask)
        let tail = random()
        let (time, counter) = state.withLock { state -> (UInt64, UInt16) in
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
            return (state.milliseconds, state.counter)
        }
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 {
            bytes[index] = UInt8(truncatingIfNeeded: time >> UInt64(40 - 8 * index))
        }
        bytes[6] = 0x70 | UInt8(truncatingIfNeeded: counter >> 8) & 0x0F
        bytes[7] = UInt8(truncatingIfNeeded: counter)
        bytes[8] = 0x80 | UInt8(truncatingIfNeeded: tail >> 56) & 0x3F
        for index in 9..<16 {
            bytes[index] = UInt8(truncatingIfNeeded: tail >> UInt64(8 * (15 - index)))
        }
        return bytes
    }

    /// 16 bytes as lowercase hex in groups of 8-4-4-4-12.
    static func text(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var characters: [UInt8] = []
        characters.reserveCapacity(36)
        for (index, byte) in bytes.enumerated() {
            if index == 4 || index == 6 || index == 8 || index == 10 {
                characters.append(UInt8(ascii: "-"))
            }
            characters.append(digits[Int(byte >> 4)])
            characters.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: characters, as: UTF8.self)
    }

    /// The wall clock's Unix time in milliseconds (zero before 1970).
    package static func wallClockMilliseconds() -> UInt64 {
        let milliseconds = (Date().timeIntervalSince1970 * 1000).rounded(.down)
        return milliseconds > 0 ? UInt64(milliseconds) : 0
    }

    /// 64 bits from the operating system's random number generator.
    package static func systemRandom() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }
}
