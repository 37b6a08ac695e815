/// A requirement of the shared-cache contract that a cache did not meet.
///
/// A failure of ``SharedGroupsCacheConformance/Check/operationSequences`` also names the seed of
/// the sequence and the step that failed, and lists the operations up to it: run
/// ``SharedGroupsCacheConformance/runOperationSequence(seed:)`` with that seed to replay it.
public struct ConformanceFailure: Error, Sendable, CustomStringConvertible {
    /// The check that failed.
    public var check: SharedGroupsCacheConformance.Check
    /// What the cache had to do.
    public var requirement: String
    /// The value the contract asks for.
    public var expected: String
    /// The value the cache gave.
    public var actual: String
    /// The seed of the operation sequence that failed, or `nil` for the other checks.
    public var seed: UInt64?
    /// The operations of the sequence up to the one that failed (the last), one line each, or
    /// empty for the other checks.
    public var operations: [String]

    /// A failure of `check` to meet `requirement`.
    ///
    /// - Parameters:
    ///   - check: The check that failed.
    ///   - requirement: What the cache had to do.
    ///   - expected: The value the contract asks for.
    ///   - actual: The value the cache gave.
    public init(check: SharedGroupsCacheConformance.Check, requirement: String, expected: String, actual: String) {
        self.init(check: check, requirement: requirement, expected: expected, actual: actual, seed: nil, operations: [])
    }

    /// A failure of `check` to meet `requirement` at the last of `operations`, in the sequence
    /// `seed` made.
    ///
    /// - Parameters:
    ///   - check: The check that failed.
    ///   - requirement: What the cache had to do.
    ///   - expected: The value the contract asks for.
    ///   - actual: The value the cache gave.
    ///   - seed: The seed of the operation sequence, or `nil`.
    ///   - operations: The operations up to the one that failed, one line each.
    public init(
        check: SharedGroupsCacheConformance.Check,
        requirement: String,
        expected: String,
        actual: String,
        seed: UInt64?,
        operations: [String]
    ) {
        self.check = check
        self.requirement = requirement
        self.expected = expected
        self.actual = actual
        self.seed = seed
        self.operations = operations
    }

    /// `<check>: <requirement>: expected <expected>, got <actual>`, then, for an operation
    /// sequence, ` (seed <seed>, step <n>: <operation>)`.
    public var description: String {
        let line = "\(check.rawValue): \(requirement): expected \(expected), got \(actual)"
        guard let seed else { return line }
        let step = operations.last.map { ", step \(operations.count): \($0)" } ?? ""
        return line + " (seed \(seed)\(step))"
    }
}

extension SharedGroupsCacheConformance.Check {
    /// Throws unless `actual` equals `expected`, describing both with `describe`.
    func expect<Value: Equatable>(
        _ actual: Value,
        _ expected: Value,
        _ requirement: String,
        describe: (Value) -> String = { String(describing: $0) }
    ) throws(ConformanceFailure) {
        guard actual != expected else { return }
        throw ConformanceFailure(
            check: self,
            requirement: requirement,
            expected: describe(expected),
            actual: describe(actual)
        )
    }

    /// Throws unless `holds`, with `expected` and `actual` as given.
    func require(_ holds: Bool, _ requirement: String, expected: String, actual: String) throws(ConformanceFailure) {
        guard !holds else { return }
        throw ConformanceFailure(check: self, requirement: requirement, expected: expected, actual: actual)
    }
}

extension SharedGroupsCacheConformance.Check {
    /// Throws unless a write was kept (or refused) as `expected`.
    func expectKept(_ kept: Bool, _ expected: Bool, _ requirement: String) throws(ConformanceFailure) {
        try expect(kept, expected, requirement) { $0 ? "kept" : "refused" }
    }

    /// Throws unless a lock was taken (or not) as `expected`.
    func expectTaken(_ taken: Bool, _ expected: Bool, _ requirement: String) throws(ConformanceFailure) {
        try expect(taken, expected, requirement) { $0 ? "taken" : "not taken" }
    }
}
