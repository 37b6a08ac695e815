extension FleetSimulation {
    /// One of the four promises the serving layer makes, which the simulation checks after every
    /// step.
    public struct Promise: Sendable, Hashable, CustomStringConvertible {
        /// The promise's name, as a violation's line shows it: `invalidation`, `budget`,
        /// `maximum-age` or `own-answer`.
        public let name: String

        private init(name: String) {
            self.name = name
        }

        /// No answer invalidated before a request began is served to it: once an invalidation (of
        /// the customer, of a group the answer holds, or of everyone) has returned, through any
        /// service, no service serves a request begun after it an answer Apple gave before it
        /// began, nor Apple's not-found for a customer Apple knew by then.
        public static let invalidation = Promise(name: "invalidation")
        /// The fleet never sends Apple more than its budget plus one burst per documented loss: in
        /// every window, the requests the simulated App Store received for an environment are at
        /// most the burst, plus the rate times the window, plus one burst for each loss of the
        /// budget's key (a flush, an eviction, a restart) in or just before the window.
        public static let budget = Promise(name: "budget")
        /// No answer older than the hard cap (`FreshnessPolicy.lifetime(of:)`, the time to live
        /// plus the maximum staleness) is served.
        public static let maximumAge = Promise(name: "maximum-age")
        /// No customer is served another customer's answer (nor another environment's), whatever
        /// their ids have in common: `admin1` is never served `ADMIN1`'s.
        public static let ownAnswer = Promise(name: "own-answer")

        /// Every promise, in the order above.
        public static let all: [Promise] = [.invalidation, .budget, .maximumAge, .ownAnswer]

        /// The promise's name.
        public var description: String { name }
    }

    /// A promise broken in one step of one run: which promise, the seed and the step that replay
    /// it, and what was seen.
    public struct Violation: Sendable, Hashable, CustomStringConvertible {
        /// The promise broken.
        public var promise: Promise
        /// The seed of the run (give it to ``FleetSimulation/run(seed:)`` to replay the run).
        public var seed: UInt64
        /// The step during which it was seen, from 1.
        public var step: Int
        /// What the step did, and what was seen: which service served whom what, or how many
        /// requests Apple received in which window.
        public var detail: String

        /// Creates a violation.
        ///
        /// - Parameters:
        ///   - promise: The promise broken.
        ///   - seed: The seed of the run.
        ///   - step: The step during which it was seen, from 1.
        ///   - detail: What was seen, on one line.
        public init(promise: Promise, seed: UInt64, step: Int, detail: String) {
            self.promise = promise
            self.seed = seed
            self.step = step
            self.detail = detail
        }

        /// One line: `seed 17 step 42 invalidation: ...`.
        public var description: String {
            let line = "seed \(seed) step \(step) \(promise): \(detail)"
            return String(line.map { $0.isNewline ? " " : $0 })
        }
    }
}
