import AppStoreGroups
import GroupDecisions
import GroupPolicy

/// The check of the invalidation count: what tells every process of the fleet that the copies it
/// keeps may have been invalidated.
extension SharedGroupsCacheConformance {
    /// The count read through both calls on every instance, which must all agree.
    private static func readCount(
        _ check: Check,
        _ subject: ConformanceSubject.Instances<any SharedInvalidations>,
        after event: String
    ) async throws
        -> UInt64?
    {
        var readings: [(String, UInt64?)] = []
        for (index, cache) in subject.all.enumerated() {
            let instance = index == 0 ? "first instance" : "second instance"
            readings.append(("invalidationCount(), \(instance)", try await cache.invalidationCount()))
            let combined = try await cache.answerAndInvalidationCount(anyTransactionID: "c1", in: .sandbox)
            readings.append(("answerAndInvalidationCount, \(instance)", combined.invalidationCount))
        }
        let describe: (UInt64?) -> String = { $0.map { "\($0)" } ?? "nil (no count kept)" }
        let (_, count) = readings[0]
        for (reading, value) in readings.dropFirst() where value != count {
            throw ConformanceFailure(
                check: check,
                requirement: "both reads on both instances give the same count (a store keeps one or none, for "
                    + "every process)",
                expected: "\(describe(count)) (as invalidationCount() on the first instance, \(event))",
                actual: "\(describe(value)) (\(reading))"
            )
        }
        return count
    }

    func checkInvalidationCount(_ subject: ConformanceSubject) async throws {
        let check = Check.invalidationCount
        guard let subject = subject.invalidations else { return }
        let (one, two) = (subject.first, subject.other)
        typealias Invalidation = @Sendable (any SharedInvalidations) async throws -> Void
        let invalidations: [(String, any SharedInvalidations, Invalidation)] = [
            ("a customer's invalidation", one, { try await $0.invalidate(anyTransactionID: "c1") }),
            ("a group's invalidation", two, { try await $0.invalidate(groupID: "g1") }),
            ("invalidating everyone", one, { try await $0.invalidateAll() }),
            ("an invalidation of a customer with no answer", two, { try await $0.invalidate(anyTransactionID: "c9") }),
            ("an invalidation of a group no answer holds", one, { try await $0.invalidate(groupID: "g404") }),
            ("another customer's invalidation", two, { try await $0.invalidate(anyTransactionID: "ADMIN1") }),
            ("invalidating everyone again", two, { try await $0.invalidateAll() }),
        ]
        guard let start = try await one.invalidationCount() else {
            // A store that keeps no count: the service then serves its copies as it did before the
            // count existed, and a count that appears later would be taken for none.
            for (name, cache, invalidate) in invalidations.prefix(3) {
                try await invalidate(cache)
                try check.expect(
                    try await Self.readCount(check, subject, after: "after \(name)"),
                    nil,
                    "a store that keeps no count answers nil from every reading"
                )
            }
            return
        }
        guard subject.second != nil else {
            throw ConformanceFailure(
                check: check,
                requirement: "a cache that counts invalidations is shown sharing its count with a second instance",
                expected: "makeSecondInstance",
                actual: "nil"
            )
        }
        var read: Set<UInt64> = [start]
        var count = try await Self.readCount(check, subject, after: "before any invalidation")
        try check.expect(count, start, "without an invalidation, every reading gives the same count")
        for (name, cache, invalidate) in invalidations {
            try await invalidate(cache)
            let next = try await Self.readCount(check, subject, after: "after \(name)")
            guard let next else {
                throw ConformanceFailure(
                    check: check,
                    requirement: "a store that keeps a count keeps it: \(name) leaves one to read",
                    expected: "a count",
                    actual: "nil"
                )
            }
            try check.require(
                !read.contains(next),
                "\(name) changes the count to a value never read before (counts are compared for equality only)",
                expected: "a count other than \(read.sorted().map(String.init).joined(separator: ", "))",
                actual: "\(next)"
            )
            read.insert(next)
            count = try await Self.readCount(check, subject, after: "read again after \(name)")
            try check.expect(count, next, "without an invalidation, every reading gives the same count")
        }
    }
}
