import GroupPolicy

/// The policies the last few test files loaded, kept for the next test file that names the same,
/// unchanged file.
///
/// `group-policy test` and `check` load every test file's policy: two hundred small test files of
/// one 6 MB policy loaded it two hundred times (over 30 s), and a 32 MiB policy would take hours.
/// A policy is an immutable value, so the test files share one. Only regular files are kept, by
/// their path, device, inode, size and modification time, so an edited file is loaded again.
enum TestedPolicyCache {
    /// How many policies are kept (the least recently used goes first).
    static let capacity = 4

    private struct Entry: Sendable {
        var fingerprint: String
        var limits: PolicyLimits
        var policy: Policy
    }

    private static let entries = Locked<[Entry]>([])

    /// The policy at `path`, loaded, or kept from an earlier load of the same unchanged file.
    static func policy(at path: String, limits: PolicyLimits) throws(GroupPolicyError) -> Policy {
        // The path is part of the key: diagnostics and coverage name the file as the test file does.
        guard let fingerprint = regularFileFingerprint(path).map({ "\($0) \(path)" }) else {
            return try Policy(contentsOf: path, limits: limits)
        }
        let kept = entries.withLock { entries -> Policy? in
            guard let index = entries.firstIndex(where: { $0.fingerprint == fingerprint && $0.limits == limits })
            else { return nil }
            let entry = entries.remove(at: index)
            entries.append(entry)
            return entry.policy
        }
        if let kept { return kept }
        let policy = try Policy(contentsOf: path, limits: limits)
        entries.withLock { entries in
            entries.append(Entry(fingerprint: fingerprint, limits: limits, policy: policy))
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
        return policy
    }
}
