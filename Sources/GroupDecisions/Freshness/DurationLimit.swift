/// The one bound of every window of a ``FreshnessPolicy`` and every duration of a configuration:
/// ten years (see ``GroupDecisionService/Configuration/longestDuration`` for why).
enum DurationLimit {
    static let longest = Duration.seconds(10 * 365 * 86_400)

    /// The first of `durations` longer than ``longest``, named in the problem, or `nil`.
    static func firstTooLong(_ durations: [(String, Duration)]) -> String? {
        for (name, duration) in durations where duration > longest {
            return "\(name) must be at most 10 years (315360000 seconds), not \(duration.components.seconds) seconds"
        }
        return nil
    }
}
