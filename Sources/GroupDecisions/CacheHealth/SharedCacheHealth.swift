/// When a shared cache that fails or is slow is left alone, and for how long: the settings of the
/// guard every call to the shared cache goes through.
public struct SharedCacheHealth: Sendable, Equatable {
    /// How long the shared cache is left alone after it fails.
    ///
    /// Meanwhile what this process knows of `Retry-After` instants holds, and it spends only its
    /// share of the fleet's budget (see ``RateLimitGate/Configuration/fallbackShare``); a request
    /// refused for want of one is told to try again after this interval, at least a second.
    /// Default 5 seconds.
    public var retryInterval: Duration = .seconds(5)
    /// A shared-cache call that takes this long or longer is slow.
    ///
    /// Default 150 milliseconds.
    public var slowCallThreshold: Duration = .milliseconds(150)
    /// How many slow shared-cache calls in a row make the service leave the cache alone for
    /// ``retryInterval``, as after a failure; zero never does.
    ///
    /// Default 5. Budget tokens, and the instant written after a 429, are still asked of a cache
    /// left alone for slowness only.
    public var slowCallsInARow: Int = 5

    /// The defaults.
    public init() {}

    /// What is wrong with these settings, or `nil`: one line naming the field.
    var problem: String? {
        let durations = [("retryInterval", retryInterval), ("slowCallThreshold", slowCallThreshold)]
        if let problem = DurationLimit.firstTooLong(durations) { return problem }
        if retryInterval < .zero { return "retryInterval must not be negative" }
        if slowCallThreshold <= .zero { return "slowCallThreshold must be positive" }
        if slowCallsInARow < 0 { return "slowCallsInARow must not be negative" }
        return nil
    }
}
