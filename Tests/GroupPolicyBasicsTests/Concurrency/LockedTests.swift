import Testing

@testable import GroupPolicyBasics

/// The lock the policy store and the decision service share: what the body returns comes back,
/// what it changes stays, and increments from many tasks at once are none of them lost.
@Suite struct LockedTests {
    @Test func withLockReturnsTheBodysValue() {
        let locked = Locked(41)
        #expect(locked.withLock { $0 + 1 } == 42)
        #expect(locked.withLock { "\($0)" } == "41")
        #expect(locked.withLock { $0 } == 41)
    }

    @Test func mutationsPersist() {
        let locked = Locked([String]())
        locked.withLock { $0.append("first") }
        let countAfterSecond = locked.withLock { names in
            names.append("second")
            return names.count
        }
        #expect(countAfterSecond == 2)
        #expect(locked.withLock { $0 } == ["first", "second"])
    }

    /// A throwing body's error reaches the caller, what it changed before throwing stays, and the
    /// lock is released (the next `withLock` would otherwise wait for ever).
    @Test func aThrowingBodyRethrowsAndReleasesTheLock() {
        struct Refused: Error, Equatable {}
        let locked = Locked(0)
        #expect(throws: Refused()) {
            try locked.withLock { value in
                value = 7
                throw Refused()
            }
        }
        #expect(locked.withLock { $0 } == 7)
    }

    @Test func concurrentIncrementsFromManyTasksSumExactly() async {
        let locked = Locked(0)
        let tasks = 32
        let incrementsPerTask = 5_000
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for _ in 0..<incrementsPerTask { locked.withLock { $0 += 1 } }
                }
            }
        }
        #expect(locked.withLock { $0 } == 160_000)
    }
}
