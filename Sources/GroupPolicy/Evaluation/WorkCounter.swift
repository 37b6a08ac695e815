import Synchronization

/// The steps of evaluation's and explanation's input-dependent loops, counted in debug builds.
///
/// Counted for the task that binds a counter: tests compare the counts for a response and one
/// twice its size to prove the work grows linearly, which no timing can show reliably. A release
/// build counts nothing.
final class WorkCounter: Sendable {
    private let steps = Atomic<Int>(0)

    /// The steps counted so far.
    var count: Int { steps.load(ordering: .relaxed) }

    func add(_ count: Int) { steps.add(count, ordering: .relaxed) }

    /// The counter of the current task, if a test bound one.
    @TaskLocal static var current: WorkCounter?
}

/// Counts `steps` for the current task's ``WorkCounter`` (debug builds only).
@inline(__always)
func countWork(_ steps: Int) {
    #if DEBUG
    WorkCounter.current?.add(steps)
    #endif
}
