extension Decision {
    /// Where the customer's groups behind a ``Decision`` came from, when a cache stood between Apple
    /// and the decision.
    public struct GroupsSource: Sendable, Hashable, CustomStringConvertible {
        /// `live`, `cache` or `stale`.
        public let name: String

        private init(name: String) {
            self.name = name
        }

        /// Fetched from Apple for this decision (or for a concurrent one it joined).
        public static let live = Decision.GroupsSource(name: "live")
        /// A cached answer within its time to live.
        public static let cache = Decision.GroupsSource(name: "cache")
        /// A cached answer past its time to live, served because fetching a fresh one failed.
        public static let stale = Decision.GroupsSource(name: "stale")

        /// The source's name.
        public var description: String { name }
    }
}
