public import AppStoreGroups

/// Where a ``GroupDecisionService`` reports every decision it serves or refuses: one
/// ``DecisionLogRecord`` each, the customer id replaced by a salted SHA-256.
///
/// A record is an observer event: the service tells its observer
/// (``GroupDecisionObserver/decisionRecorded(_:)``), then hands the record to the log.
///
/// A served decision's record carries its ``DecisionLogRecord/decisionID``, the `decisionId` of the
/// JSON the app answered with, so a support ticket quoting it finds its line (see
/// <doc:ObservingDecisions>, section "Matching a support ticket to the log").
///
/// ```swift
/// let log = try DecisionLog.jsonLines(path: "/var/log/app/decisions.jsonl", salt: salt) { loss in
///     logger.warning("decision log: \(loss.dropped) records dropped, \(loss.failed) not written")
/// }
/// let service = try GroupDecisionService(policies: store, clients: [client], decisionLog: log)
/// ```
///
/// The salt is a secret the fleet shares, so one customer's records join across processes; anyone
/// who has it can recover an id by trying every id: keep it as secret as the log (see the article
/// "Serving decisions at fleet scale", section "The decision log").
public struct DecisionLog: Sendable {
    /// Records a JSON Lines log could not write since its previous report.
    ///
    /// ``DecisionLog/jsonLines(path:salt:bufferBytes:onLoss:)`` hands one to its `onLoss` when
    /// records are lost: at once for the first loss, then at most once a minute, and when the log
    /// is released.
    public struct Loss: Sendable, Hashable {
        /// Records dropped because the buffer was full: the file or its reader did not keep up.
        public var dropped: Int
        /// Records whose write failed (a full disk, `/dev/full`, a pipe whose reader went away).
        public var failed: Int
        /// The last write failure, such as `No space left on device`, when `failed` is not zero.
        public var lastError: String?

        /// Creates a loss report.
        public init(dropped: Int = 0, failed: Int = 0, lastError: String? = nil) {
            self.dropped = dropped
            self.failed = failed
            self.lastError = lastError
        }
    }

    /// The fewest bytes a salt may have.
    public static let minimumSaltBytes = 16
    /// The fewest distinct byte values a salt may have.
    public static let minimumDistinctSaltBytes = 8

    private let salt: [UInt8]
    private let sink: @Sendable (DecisionLogRecord) -> Void
    private let writer: LineWriter?

    /// A log that hands each record to `sink`, on the caller's task: keep it quick, and never
    /// block in it (write to a buffer, as ``jsonLines(path:salt:bufferBytes:onLoss:)`` does).
    ///
    /// - Parameters:
    ///   - salt: The secret prefixed to each customer id before hashing: at least 16 bytes, with at
    ///     least 8 distinct byte values (see ``checkSalt(_:)``).
    ///   - sink: Receives each record.
    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` for a salt that breaks the rule.
    public init(salt: [UInt8], sink: @escaping @Sendable (DecisionLogRecord) -> Void) throws(AppStoreGroupsError) {
        try Self.checkSalt(salt)
        self.salt = salt
        self.sink = sink
        self.writer = nil
    }

    private init(salt: [UInt8], writer: LineWriter) {
        self.salt = salt
        self.writer = writer
        self.sink = { record in writer.write(record.jsonLine) }
    }

    /// Refuses a salt that is short or plainly not random.
    ///
    /// A salt needs ``minimumSaltBytes`` (16) bytes and ``minimumDistinctSaltBytes`` (8) distinct
    /// byte values. Generate it (`openssl rand -hex 32`): the rule cannot tell a guessable phrase
    /// from random bytes.
    ///
    /// - Parameter salt: The salt.
    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` naming the rule it breaks.
    public static func checkSalt(_ salt: [UInt8]) throws(AppStoreGroupsError) {
        guard salt.count >= minimumSaltBytes else {
            throw AppStoreGroupsError(
                code: .invalidConfiguration,
                message: "the decision log's salt must be at least \(minimumSaltBytes) bytes, not \(salt.count)"
            )
        }
        let distinct = Set(salt).count
        guard distinct >= minimumDistinctSaltBytes else {
            throw AppStoreGroupsError(
                code: .invalidConfiguration,
                message:
                    "the decision log's salt must have at least \(minimumDistinctSaltBytes) distinct byte values, "
                    + "not \(distinct): use random bytes, such as the output of openssl rand -hex 32"
            )
        }
    }

    /// A log writing one JSON line per record (``DecisionLogRecord/jsonLine``) to a file, appending,
    /// or to standard output for `-`, without ever blocking the decision that records.
    ///
    /// Its bounded buffer, the losses it reports to `onLoss`, rotation and FIFOs are described in
    /// the article "Serving decisions at fleet scale", section "The decision log".
    ///
    /// - Parameters:
    ///   - path: The file, created if missing (mode 0600), or `-` for standard output.
    ///   - salt: The secret prefixed to each customer id before hashing (see ``checkSalt(_:)``).
    ///   - bufferBytes: The most bytes of records waiting to be written, at least 4,096. Default:
    ///     1 MiB (about 3,000 records).
    ///   - onLoss: Receives the records lost, on the log's queue (keep it quick). Default: nothing:
    ///     the library writes nowhere on its own; pass your logger or metrics here.
    /// - Returns: The log.
    /// - Throws: `AppStoreGroupsError.Code.invalidConfiguration` when the salt breaks the rule,
    ///   the buffer is under 4,096 bytes, or the file cannot be opened (one line naming the path).
    public static func jsonLines(
        path: String,
        salt: [UInt8],
        bufferBytes: Int = 1 << 20,
        onLoss: @escaping @Sendable (Loss) -> Void = { _ in }
    ) throws(AppStoreGroupsError) -> DecisionLog {
        try jsonLines(
            to: path == "-" ? .descriptor(1, owned: false) : .path(path),
            salt: salt,
            bufferBytes: bufferBytes,
            onLoss: onLoss
        )
    }

    /// ``jsonLines(path:salt:bufferBytes:onLoss:)`` with any destination and intervals (tests
    /// shorten them).
    static func jsonLines(
        to destination: LineWriter.Destination,
        salt: [UInt8],
        bufferBytes: Int,
        reportInterval: Duration = .seconds(60),
        reopenInterval: Duration = .seconds(1),
        onLoss: @escaping @Sendable (Loss) -> Void
    ) throws(AppStoreGroupsError) -> DecisionLog {
        try checkSalt(salt)
        guard bufferBytes >= 4096 else {
            throw AppStoreGroupsError(
                code: .invalidConfiguration,
                message: "the decision log's buffer must be at least 4096 bytes, not \(bufferBytes)"
            )
        }
        do {
            let writer = try LineWriter(
                destination,
                capacityBytes: bufferBytes,
                reportInterval: reportInterval,
                reopenInterval: reopenInterval,
                label: "AppStoreGroups.DecisionLog",
                onLoss: onLoss
            )
            return DecisionLog(salt: salt, writer: writer)
        } catch {
            throw AppStoreGroupsError(
                code: .invalidConfiguration,
                message: "cannot open the decision log \(error.path): \(error.reason)"
            )
        }
    }

    /// Waits until every record handed to the log so far is written (or counted lost), or until
    /// `timeout` passes.
    ///
    /// For a clean shutdown. It blocks the calling thread: never call it while serving.
    ///
    /// - Parameter timeout: The longest wait.
    /// - Returns: Whether every record was handled in time (always `true` for a log made with a
    ///   sink).
    @discardableResult
    public func flush(within timeout: Duration) -> Bool {
        writer?.flush(within: timeout) ?? true
    }

    /// The salted hash of a customer id.
    func customerHash(_ customerID: String) -> String {
        SHA256Hasher.hex(SHA256Hasher.hash(salt + Array(customerID.utf8)))
    }

    func record(_ record: DecisionLogRecord) {
        sink(record)
    }
}
