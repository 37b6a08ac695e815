import GroupPolicy
import GroupPolicyBasics

/// The bytes of the policy and test files one command reads, bounded together, and the policy its
/// test files name, kept while consecutive test files name it.
///
/// `check` and `test` take every file under their paths, and each test file loads the policy it
/// names. Each file is within its own limits, but a folder of a hundred files at the limits cost a
/// hundred times what one may, and a hundred test files naming one large policy loaded it a
/// hundred times. So a command reads at most ``maximumTotalBytes`` of policy and test files, every
/// read counted; the policy named by consecutive test files is read once (test files usually sit
/// beside their policy, so they come one after another in a walk); and only that one policy is
/// kept, so memory stays that of a policy or two. What the response files of a test file hold is
/// bounded by that test file (see the DocC article "Limits and failure semantics").
final class PolicyLoader {
    /// The most bytes of policy and test files one command reads: 32 MiB, what one file may hold.
    static let maximumTotalBytes = 32 << 20

    private let limits: PolicyLimits
    private let maximumTotalBytes: Int
    /// The policy the last test file named, by real path, and how loading it ended.
    private var last: (key: String, result: Result<Policy, GroupPolicyError>)?
    private var totalBytes = 0
    /// Policy files as an author is editing them, by real path: read instead of the files on disk.
    private let edits: [String: [UInt8]]
    /// Which response files the command's test files may read.
    let responseFileAccess: ResponseFileAccess

    /// Creates a loader for one command.
    ///
    /// - Parameters:
    ///   - limits: The limits of each policy and test file.
    ///   - maximumTotalBytes: The bound on the bytes the command reads, all files together.
    ///   - edits: Bytes to read instead of some files' own, by the files' real paths.
    ///   - responseFileAccess: Which response files the test files may read.
    init(
        limits: PolicyLimits = .default,
        maximumTotalBytes: Int = PolicyLoader.maximumTotalBytes,
        edits: [String: [UInt8]] = [:],
        responseFileAccess: ResponseFileAccess = ResponseFileAccess()
    ) {
        self.limits = limits
        self.maximumTotalBytes = maximumTotalBytes
        self.edits = edits
        self.responseFileAccess = responseFileAccess
    }

    /// The bytes of a policy file: its edit, if it has one, or else the file, read within the limits;
    /// an edit over the size limit is refused as the file would be.
    func read(_ path: String) throws(GroupPolicyError) -> [UInt8] {
        try readFile(path, limits: limits, edited: edits.isEmpty ? nil : edits[realPath(path) ?? path])
    }

    /// Counts the files at `paths` (a directory: the files of its policy set) against the bound,
    /// before any is read.
    ///
    /// A regular file counts its size (nothing if it is over its own limit: that is refused by its
    /// size, unread); a FIFO, or a file of `/proc` or `/sys` (which report no size), counts as the
    /// most a file may hold, which is what reading it may cost; what is refused without reading
    /// (a device, a socket, a missing file) counts nothing.
    ///
    /// - Throws: `limitExceeded` naming the first path that takes the total over the bound.
    func charge(_ paths: [String]) throws(GroupPolicyError) {
        for path in paths {
            if isDirectory(path) {
                try charge((try? PolicyFiles.policyFiles(at: path)) ?? [])
                continue
            }
            totalBytes += cost(of: path)
            if totalBytes > maximumTotalBytes {
                throw GroupPolicyError(
                    code: .limitExceeded,
                    message: "\(path): the policy and test files of one command hold more than \(maximumTotalBytes) "
                        + "bytes together, over the limit of \(maximumTotalBytes) bytes"
                )
            }
        }
    }

    /// What reading `path` may cost, in bytes, known before reading it.
    private func cost(of path: String) -> Int {
        if !edits.isEmpty, let edited = edits[realPath(path) ?? path] {
            return edited.count > limits.maximumBytes ? 0 : edited.count  // As a file's size.
        }
        guard let status = try? FileStatus(path: path) else { return 0 }  // Refused when opened.
        switch status.kind {
        case .regular:
            // A file over its own limit is refused by its size, unread. The files of `/proc` and
            // `/sys` report no size and are read as streams, up to the file limit.
            if status.size > limits.maximumBytes { return 0 }
            if status.size == 0, path.hasPrefix("/proc/") || path.hasPrefix("/sys/") { return limits.maximumBytes }
            return status.size
        case .fifo:
            return limits.maximumBytes
        default:
            return 0  // Refused without reading: a directory, a device, a socket.
        }
    }

    /// The policy at `path` (a file, or a directory's policy set), counted against the bound
    /// when it is read; asked for again right after, the same result without reading.
    func policy(at path: String) throws(GroupPolicyError) -> Policy {
        let key = realPath(path) ?? path
        if let last, last.key == key { return try last.result.get() }
        last = nil
        let result = Result { () throws(GroupPolicyError) -> Policy in
            try charge([path])
            return try Policy(contentsOf: path, limits: limits) { file throws(GroupPolicyError) in try read(file) }
        }
        last = (key, result)
        return try result.get()
    }
}
