import Foundation
import Synchronization
import Testing

@testable import GroupDecisionsTesting

/// The fleet simulation's clock: sleeps wait for it, and one that follows the wall clock never runs slower than it.
@Suite("Fleet simulation: the clock")
struct SimulationClockTests {
    @Test("a sleep wakes when the clock reaches its deadline, in the order of the deadlines")
    func sleepsWakeInOrder() async throws {
        let clock = SimulationClock(start: Date(timeIntervalSince1970: 1_800_000_000), followsWallClock: false)
        let woken = Lines<Int>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for milliseconds in [300, 100, 200] {
                group.addTask {
                    try await clock.sleep(for: .milliseconds(milliseconds))
                    woken.append(milliseconds)
                }
            }
            while clock.sleeperCount < 3 { await Task.yield() }
            let start = Date(timeIntervalSince1970: 1_800_000_000)
            for milliseconds in [100, 200, 300] {
                let deadline = try #require(clock.earliestDeadline)
                #expect(deadline == start.addingTimeInterval(Double(milliseconds) / 1000))
                clock.advance(to: deadline)
                while woken.all.count < milliseconds / 100 { await Task.yield() }
            }
            try await group.waitForAll()
        }
        #expect(woken.all == [100, 200, 300])
        #expect(clock.now() == Date(timeIntervalSince1970: 1_800_000_000).addingTimeInterval(0.3))
    }

    @Test("a sleep cancelled throws and leaves no deadline behind")
    func cancelledSleep() async throws {
        let clock = SimulationClock(start: Date(timeIntervalSince1970: 1_800_000_000), followsWallClock: false)
        let sleeping = Task { try await clock.sleep(for: .seconds(10)) }
        while clock.sleeperCount < 1 { await Task.yield() }
        sleeping.cancel()
        await #expect(throws: CancellationError.self) { try await sleeping.value }
        #expect(clock.earliestDeadline == nil)
    }

    @Test("following the wall clock, time never runs slower than real time, and moves on from an advance")
    func followsTheWallClock() async throws {
        let clock = SimulationClock(start: Date(), followsWallClock: true)
        // The wall clock is read inside the interval the clock is read over, so a thread put aside
        // between two readings (tens of milliseconds on a busy machine) only lengthens the clock's
        // interval: with the wall read outside it, a pause of a millisecond there failed the test.
        let before = clock.now()
        let wallBefore = Date()
        try await Task.sleep(for: .milliseconds(20))
        let wallAfter = Date()
        let elapsed = clock.now().timeIntervalSince(before)
        #expect(elapsed >= wallAfter.timeIntervalSince(wallBefore) - 0.001)
        // Likewise a minute's advance is measured from a wall reading before it: the wall read
        // after it has moved on by however long the thread was put aside.
        let wallAtJump = Date()
        clock.advance(to: clock.now().addingTimeInterval(60))
        let jumped = clock.now()
        #expect(jumped.timeIntervalSince(wallAtJump) >= 59.99)
        try await Task.sleep(for: .milliseconds(5))
        #expect(clock.now() > jumped)
        // An advance to an instant already passed does not move the clock back.
        clock.advance(to: before)
        #expect(clock.now() > jumped)
    }
}

/// Values appended from any task.
final class Lines<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    func append(_ value: Value) { values.withLock { $0.append(value) } }

    var all: [Value] { values.withLock { $0 } }
}
