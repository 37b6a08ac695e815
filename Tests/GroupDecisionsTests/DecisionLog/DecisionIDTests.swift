import Foundation
import GroupPolicyBasics
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// Decision ids: UUIDv7 in RFC 9562's layout, ordered within a process, unique across processes.
@Suite("Decision ids")
struct DecisionIDTests {
    /// The 48-bit millisecond time an id carries.
    static func milliseconds(_ id: String) -> UInt64? {
        UInt64(id.prefix(8) + id.dropFirst(9).prefix(4), radix: 16)
    }

    /// The 62 random bits of an id's `rand_b`.
    static func randomBits(_ id: String) -> UInt64? {
        let hex = id.dropFirst(19).filter { $0 != "-" }
        return UInt64(hex, radix: 16).map { $0 & 0x3FFF_FFFF_FFFF_FFFF }
    }

    /// A generator on a clock that reads `clock`'s value, with `random` bits.
    static func generator(clock: Locked<UInt64>, random: UInt64) -> DecisionIDGenerator {
        DecisionIDGenerator(milliseconds: { clock.withLock { $0 } }, random: { random })
    }

    @Test("layout: time, version 7, counter, variant, random bits, exactly")
    func layout() {
        let clock = Locked<UInt64>(0x0123_4567_89AB)
        let allOnes = Self.generator(clock: clock, random: .max)
        // The counter starts at the random start (0x7FF, the top bit kept clear) and counts up.
        #expect(allOnes.next() == "01234567-89ab-77ff-bfff-ffffffffffff")
        #expect(allOnes.next() == "01234567-89ab-7800-bfff-ffffffffffff")
        let zeros = Self.generator(clock: clock, random: 0)
        #expect(zeros.next() == "01234567-89ab-7000-8000-000000000000")
        #expect(zeros.nextBytes().count == 16)
        // The check the other tests use refuses uppercase, another version and another variant.
        #expect(DecisionIDs.isVersion7("019d1b7e-5a3c-7b21-8f4e-2c9a61d0b7f3"))
        #expect(!DecisionIDs.isVersion7("019D1B7E-5A3C-7B21-8F4E-2C9A61D0B7F3"))
        #expect(!DecisionIDs.isVersion7("019d1b7e-5a3c-4b21-8f4e-2c9a61d0b7f3"))
        #expect(!DecisionIDs.isVersion7("019d1b7e-5a3c-7b21-cf4e-2c9a61d0b7f3"))
    }

    @Test("one millisecond: the counter orders ids, and past 4095 the time moves one millisecond ahead")
    func counterRollover() {
        let clock = Locked<UInt64>(1_800_000_000_000)
        let generator = Self.generator(clock: clock, random: 0)
        let ids = (0..<10_000).map { _ in generator.next() }
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == 10_000)
        #expect(Self.milliseconds(ids[4_095]) == 1_800_000_000_000)
        #expect(Self.milliseconds(ids[4_096]) == 1_800_000_000_001)
        #expect(ids[4_096].dropFirst(14).prefix(4) == "7000")
        #expect(ids.allSatisfy(DecisionIDs.isVersion7))
    }

    @Test("a wall clock that steps back never makes an earlier id")
    func clockStepsBack() {
        let clock = Locked<UInt64>(1_800_000_000_000)
        let generator = Self.generator(clock: clock, random: 0)
        let first = generator.next()
        clock.withLock { $0 = 1_799_999_000_000 }
        let second = generator.next()
        #expect(first < second)
        #expect(Self.milliseconds(second) == 1_800_000_000_000)
        clock.withLock { $0 = 1_800_000_000_005 }
        let third = generator.next()
        #expect(Self.milliseconds(third) == 1_800_000_000_005)
        #expect(second < third)
    }

    @Test("100,000 ids from 16 tasks: all distinct, each task's in order, times between the clock's reads")
    func manyTasks() async {
        let before = DecisionIDGenerator.wallClockMilliseconds()
        let perTask = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<16 {
                group.addTask { (0..<6_250).map { _ in DecisionIDGenerator.shared.next() } }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let after = DecisionIDGenerator.wallClockMilliseconds()
        let all = perTask.flatMap { $0 }
        #expect(all.count == 100_000)
        #expect(Set(all).count == 100_000)
        #expect(perTask.allSatisfy { ids in zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 } })
        #expect(all.allSatisfy(DecisionIDs.isVersion7))
        // An id runs ahead of the clock only when a millisecond's counter is used up, and each
        // holds at least 2048 ids: 100,000 ids can be at most 49 milliseconds ahead.
        let times = all.compactMap(Self.milliseconds)
        #expect(times.count == 100_000)
        #expect((times.min() ?? 0) >= before)
        #expect((times.max() ?? .max) <= after + 50)
    }

    @Test("two processes' generators in the same millisecond share no id: the random part decides")
    func twoProcesses() {
        // Two generators stand for two processes: same frozen clock, each its own system randomness,
        // so only rand_b (and the counter's random start) can tell their ids apart.
        let clock = Locked<UInt64>(1_800_000_000_000)
        let first = DecisionIDGenerator(milliseconds: { clock.withLock { $0 } })
        let second = DecisionIDGenerator(milliseconds: { clock.withLock { $0 } })
        let ids = (0..<20_000).map { _ in first.next() } + (0..<20_000).map { _ in second.next() }
        #expect(Set(ids).count == 40_000)
        let random = ids.compactMap(Self.randomBits)
        #expect(Set(random).count == 40_000)
        // Each of the 62 random bits is set in about half the ids: 40% to 60% fails with a
        // probability far below 10^-100 for a fair generator, and always for a constant or a counter.
        for bit in 0..<62 {
            let set = random.filter { $0 >> UInt64(bit) & 1 == 1 }.count
            #expect((16_000...24_000).contains(set), "bit \(bit) was set in \(set) of 40,000 ids")
        }
    }
}
