import GroupPolicy
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicyTooling

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What one command reads is bounded together, every read counted, and the policy consecutive test
/// files name is read once.
@Suite struct PolicyLoaderTests {
    /// Two copies of the team policy (`a.json`, `b.json`) in a fresh directory, and their size.
    static func twoPolicies() throws -> (directory: String, size: Int) {
        let directory = try makeTemporaryDirectory("policy-loader")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: repositoryFile("Policies/team-workspace.json")))
        try bytes.write(to: URL(fileURLWithPath: directory + "/a.json"))
        try bytes.write(to: URL(fileURLWithPath: directory + "/b.json"))
        return (directory, bytes.count)
    }

    /// Asked for one policy again and again, the loader reads it once: three asks fit a bound of
    /// one file.
    @Test func aPolicyAskedForAgainIsReadOnce() throws {
        let (directory, size) = try Self.twoPolicies()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let loader = PolicyLoader(maximumTotalBytes: size)
        let first = try loader.policy(at: directory + "/a.json")
        let again = try loader.policy(at: directory + "/./a.json")
        #expect(first.revision == again.revision)
        _ = try loader.policy(at: directory + "/a.json")
    }

    /// Only the last policy is kept: A, B, A reads three times, and the third read is over a bound
    /// of two files, refused naming the path and the limit.
    @Test func everyReadCountsAndOnlyTheLastPolicyIsKept() throws {
        let (directory, size) = try Self.twoPolicies()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let loader = PolicyLoader(maximumTotalBytes: 2 * size)
        _ = try loader.policy(at: directory + "/a.json")
        _ = try loader.policy(at: directory + "/b.json")
        #expect {
            try loader.policy(at: directory + "/a.json")
        } throws: { error in
            let error = error as? GroupPolicyError
            return error?.code == .limitExceeded
                && error?.message
                    == "\(directory)/a.json: the policy and test files of one command hold more than \(2 * size) bytes "
                    + "together, over the limit of \(2 * size) bytes"
        }
    }

    /// Charging a directory counts the files of its policy set; a file of `/proc` counts as the most
    /// a file may hold.
    @Test func aDirectoryCountsItsFilesAndADeviceCountsTheFileLimit() throws {
        let (directory, size) = try Self.twoPolicies()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try PolicyLoader(maximumTotalBytes: 2 * size).charge([directory])
        #expect(throws: GroupPolicyError.self) { try PolicyLoader(maximumTotalBytes: 2 * size - 1).charge([directory]) }
        // A file of /proc reports no size and is read as a stream: it costs the file limit. A
        // device is refused unread, and costs nothing.
        let limits = PolicyLimits(maximumBytes: 100)
        try PolicyLoader(limits: limits, maximumTotalBytes: 100).charge(["/proc/self/status", "/dev/null"])
        #expect(throws: GroupPolicyError.self) {
            try PolicyLoader(limits: limits, maximumTotalBytes: 199).charge(["/proc/self/status", "/proc/self/stat"])
        }
    }

    /// The default bound is 32 MiB, what one policy file may hold.
    @Test func theDefaultIsOneFilesLimit() {
        #expect(PolicyLoader.maximumTotalBytes == PolicyLimits.default.maximumBytes)
    }
}
