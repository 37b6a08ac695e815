package import Testing

/// Waits until `condition` holds, looking every 10 ms: the one way a serving test waits for another task or process.
///
/// The deadline is wide: on a loaded machine a task may wait a minute and more for a thread, so a test waits for the
/// event and asserts its order and values, never its timing. Past the deadline the test fails at the caller's line.
package func waitUntil(
    atMost: Duration = .seconds(600),
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    let end = ContinuousClock.now + atMost
    while try await !condition() {
        guard ContinuousClock.now < end else {
            Issue.record("the condition did not hold within \(atMost)", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}
