#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a ``GroupDecisionService`` reports every decision it serves or refuses: one
/// ``DecisionLogRecord`` each, the customer id replaced by a salted SHA-256.
///
/// ```swift
/// let log = try DecisionLog.jsonLines(path: "/var/log/app/decisions.jsonl", salt: salt)
/// let service = try GroupDecisionService(policies: store, clients: [client], decisionLog: log)
/// ```
///
/// The salt is a secret the fleet shares, so one customer's records join across processes while
/// the hash alone does not reveal the id (transaction ids are too few to be safe unsalted);
/// changing it breaks that join on purpose.
public struct DecisionLog: Sendable {
    private let salt: [UInt8]
    private let sink: @Sendable (DecisionLogRecord) -> Void

    /// A log that hands each record to `sink`, on the caller's task: keep it quick.
    ///
    /// - Parameters:
    ///   - salt: The secret prefixed to each customer id before hashing; at least 16 bytes.
    ///   - sink: Receives each record.
    /// - Throws: ``AppStoreGroupsError/Code/invalidConfiguration`` for a salt shorter than 16
    ///   bytes.
    public init(salt: [UInt8], sink: @escaping @Sendable (DecisionLogRecord) -> Void) throws(AppStoreGroupsError) {
        guard salt.count >= 16 else {
            throw AppStoreGroupsError(
                code: .invalidConfiguration,
                message: "the decision log's salt must be at least 16 bytes"
            )
        }
        self.salt = salt
        self.sink = sink
    }

    /// A log writing one JSON line per record (``DecisionLogRecord/jsonLine``) to a file, appending,
    /// or to standard output for `-`.
    ///
    /// Each line is written with one `write` to a file opened for appending, so lines from
    /// several processes sharing the file do not interleave.
    ///
    /// - Parameters:
    ///   - path: The file, created if missing (mode 0600), or `-` for standard output.
    ///   - salt: The secret prefixed to each customer id before hashing; at least 16 bytes.
    /// - Returns: The log.
    /// - Throws: ``AppStoreGroupsError/Code/invalidConfiguration`` when the file cannot be opened
    ///   or the salt is too short.
    public static func jsonLines(path: String, salt: [UInt8]) throws(AppStoreGroupsError) -> DecisionLog {
        let writer = try LineWriter(path: path)
        return try DecisionLog(salt: salt) { record in writer.write(record.jsonLine) }
    }

    /// The salted hash of a customer id.
    func customerHash(_ customerID: String) -> String {
        SHA256Hasher.hex(SHA256Hasher.hash(salt + Array(customerID.utf8)))
    }

    func record(_ record: DecisionLogRecord) {
        sink(record)
    }
}

/// Appends whole lines to a file descriptor, one `write` per line.
private final class LineWriter: Sendable {
    private let descriptor: Int32
    private let owned: Bool

    init(path: String) throws(AppStoreGroupsError) {
        if path == "-" {
            descriptor = 1
            owned = false
            return
        }
        let opened = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            throw AppStoreGroupsError(
                code: .invalidConfiguration,
                message: "cannot open the decision log \(path): \(String(cString: strerror(errno)))"
            )
        }
        descriptor = opened
        owned = true
    }

    deinit {
        if owned { close(descriptor) }
    }

    func write(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { raw in
                #if canImport(Darwin)
                Darwin.write(descriptor, raw.baseAddress, raw.count)
                #elseif canImport(Glibc)
                Glibc.write(descriptor, raw.baseAddress, raw.count)
                #else
                Musl.write(descriptor, raw.baseAddress, raw.count)
                #endif
            }
            if written < 0, errno == EINTR { continue }
            // A log that cannot be written must not fail the decision.
            guard written > 0 else { return }
            offset += written
        }
    }
}
