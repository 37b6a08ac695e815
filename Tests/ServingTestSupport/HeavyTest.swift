package import Testing

/// Runs a test that loads the whole machine (a fleet of server processes, a browser, a binary
/// reading 64 MiB) one at a time with the others of its kind.
///
/// The package's tests run in one process, suites in parallel. On a busy two-core machine, two such tests at once
/// starve every timing-sensitive test of the other suites for tens of seconds. Marked with `.heavy`, each test case of
/// a suite or test waits for the one before it to finish; the light tests still run beside it.
package struct HeavyTest: TestTrait, SuiteTrait, TestScoping {
    package var isRecursive: Bool { true }

    /// Scopes each test case, never the suite around them: a suite holding the turn would keep its own tests from it.
    package func scopeProvider(for test: Test, testCase: Test.Case?) -> HeavyTest? {
        testCase == nil ? nil : self
    }

    package func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await HeavyTestTurn.shared.run(function)
    }
}

extension Trait where Self == HeavyTest {
    /// Runs each test case after the heavy one before it has finished.
    package static var heavy: Self { HeavyTest() }
}

/// The turn the heavy tests take one after another, first come first served.
actor HeavyTestTurn {
    static let shared = HeavyTestTurn()
    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` once the turn is the caller's, then passes the turn on.
    func run(_ body: @Sendable () async throws -> Void) async throws {
        if taken {
            await withCheckedContinuation { waiting.append($0) }
        } else {
            taken = true
        }
        defer { pass() }
        try await body()
    }

    private func pass() {
        if waiting.isEmpty {
            taken = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
