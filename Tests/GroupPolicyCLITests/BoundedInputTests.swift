import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Every input the CLI reads is bounded while reading: an endless standard input, special files as
/// `--response`, `--policy`, a `check` argument or a `responseFile`, FIFOs; directory walks end on
/// link loops and take each file once.
@Suite struct BoundedInputTests {
    static let pagemap = "/proc/self/pagemap"
    static let policy = CLIRunner.packageRoot + "/Policies/team-workspace.json"

    /// What a run of the binary spawned with a file as standard input cost.
    struct Measured {
        var status: Int32
        var stdout: String
        var stderr: String
        var peakResidentKiB: Int
        var duration: Duration
    }

    /// GNU time, which measures the peak memory of the binary alone.
    static let time = "/usr/bin/time"

    /// Whether the memory bound can be measured here; CI installs GNU time (Debian's `time`).
    static let canMeasureMemory =
        FileManager.default.isExecutableFile(atPath: time)
        || ProcessInfo.processInfo.environment["GROUP_POLICY_REQUIRE_ALL_TESTS"] == "1"

    /// Runs the binary with `stdinPath` opened as its standard input, under GNU time, which reports
    /// the binary's own peak resident memory.
    ///
    /// Not `wait4` on a child spawned from here: `posix_spawn` runs the child on this process's
    /// memory until it execs, and Linux then counts this process's peak as the child's, so the
    /// figure was the test runner's (232 MB once, with other tests' inputs loaded), not the binary's.
    static func runMeasured(_ arguments: [String], stdinPath: String) throws -> Measured {
        let directory = try makeScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdinPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, directory + "/out", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, directory + "/err", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let measure = [time, "-f", "%M", "-o", directory + "/rss"]
        let argv: [UnsafeMutablePointer<CChar>?] =
            (measure + [CLIRunner.binary] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let start = ContinuousClock.now
        let spawned = posix_spawn(&pid, time, &actions, nil, argv, environ)
        try #require(spawned == 0)
        var status: Int32 = 0
        var usage = rusage()
        try #require(wait4(pid, &status, 0, &usage) == pid)
        let duration = ContinuousClock.now - start
        let stdout = try String(contentsOfFile: directory + "/out", encoding: .utf8)
        let stderr = try String(contentsOfFile: directory + "/err", encoding: .utf8)
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        let exitStatus = status & 0x7f == 0 ? (status >> 8) & 0xff : -1
        // GNU time writes "Command exited with non-zero status N" before the figure; the last line
        // is the peak in KiB.
        let report = try String(contentsOfFile: directory + "/rss", encoding: .utf8)
        let peak = try #require(report.split(separator: "\n").last.flatMap { Int($0) })
        return Measured(status: exitStatus, stdout: stdout, stderr: stderr, peakResidentKiB: peak, duration: duration)
    }

    static func makeScratchDirectory() throws -> String {
        let directory =
            FileManager.default.temporaryDirectory.path + "/bounded-input-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test(.enabled(if: canMeasureMemory, "needs GNU time to measure memory: apt-get install time"))
    func anEndlessStandardInputStopsAtTheResponseLimit() async throws {
        // Before, the process grew to 1.5 GB in 3 s and kept going. The wait for the child runs on
        // a thread of its own, not one of the cooperative pool's (two here) that other suites need.
        let run = try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        try Self.runMeasured(
                            ["eval", "--policy", Self.policy, "--response", "-"],
                            stdinPath: "/dev/zero"
                        )
                    }
                )
            }
            .start()
        }
        #expect(run.status == 2)
        #expect(
            run.stderr
                == "Error: standard input: stream of more than 1048576 bytes is over the limit of 1048576 bytes\n"
        )
        // It ends in bounded memory (the memory bound is what rules out reading on); the time
        // bound only rules out a hang, with room for a busy machine.
        #expect(run.duration < .seconds(60))
        #expect(run.peakResidentKiB < 200 * 1024, "peak resident \(run.peakResidentKiB) KiB")
    }

    @Test(arguments: [
        (
            ["eval", "--policy", policy, "--response", pagemap], Int32(2),
            "Error: /proc/self/pagemap: special file of more than 1048576 bytes is over the limit of 1048576 bytes\n"
        ),
        (
            ["eval", "--policy", pagemap, "--response", "Examples/no-groups.json"], Int32(1),
            "/proc/self/pagemap:1:1: error: $: special file of more than 33554432 bytes is over the limit of 33554432 bytes\n"
                + "Error: policy /proc/self/pagemap does not load\n"
        ),
        (
            ["eval", "--policy", "/dev/zero", "--response", "Examples/no-groups.json"], Int32(2),
            "Error: /dev/zero is a character device, not a file\n"
        ),
        (
            ["eval", "--policy", policy, "--response", "/dev/null"], Int32(2),
            "Error: /dev/null is a character device, not a file\n"
        ),
        (
            ["check", pagemap], Int32(1),
            "/proc/self/pagemap:1:1: error: $: special file of more than 33554432 bytes is over the limit of 33554432 bytes\n"
        ),
        (["check", "/dev/zero"], Int32(2), "Error: /dev/zero is a character device, not a file\n"),
    ])
    func specialFilesGetOneClearLine(arguments: [String], status: Int32, stderr: String) async throws {
        try #require(FileManager.default.fileExists(atPath: Self.pagemap))
        let output = try await CLIRunner.run(arguments)
        #expect(output.status == status)
        #expect(output.stderr == stderr)
    }

    /// Allowed outside its project (`--allow-outside`), a special file is read up to the response
    /// limit; without, it is refused unread.
    @Test func aTestCaseWhoseResponseFileIsSpecialFailsWithOneLine() async throws {
        try #require(FileManager.default.fileExists(atPath: Self.pagemap))
        let directory = try Self.makeScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let testFile = directory + "/special.tests.json"
        try Data(
            """
            { "format": "group-policy-tests/v1", "policy": "\(Self.policy)",
              "cases": [ { "name": "special", "responseFile": "/proc/self/pagemap", "expect": { "capabilities": [] } } ] }
            """.utf8
        ).write(to: URL(fileURLWithPath: testFile))
        let output = try await CLIRunner.run(["test", "--allow-outside", testFile])
        #expect(output.status == 1)
        #expect(output.stdout == "FAIL \(testFile): the test file does not load\n0 passed, 1 failed\n")
        #expect(
            output.stderr
                == "\(testFile):2:51: error: cases[0].responseFile: response file '/proc/self/pagemap' does not load: "
                + "/proc/self/pagemap: special file of more than 1048576 bytes is over the limit of 1048576 bytes\n"
        )
        let refused = try await CLIRunner.run(["test", testFile])
        #expect(refused.status == 1)
        #expect(
            refused.stderr
                == "\(testFile):2:51: error: cases[0].responseFile: response file '/proc/self/pagemap' is outside "
                + "\(directory), the project of its test file (a responseFile must be a regular file in it; check, "
                + "test and playground take --allow-outside)\n"
        )
    }

    @Test func aFIFOIsReadNotPermissionDenied() async throws {
        let directory = try Self.makeScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/response.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let response = try Data(
            contentsOf: URL(fileURLWithPath: CLIRunner.packageRoot + "/Examples/organization-admin.json")
        )
        Thread.detachNewThread {
            let descriptor = open(fifo, O_WRONLY)
            guard descriptor >= 0 else { return }
            _ = response.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
        }
        let output = try await CLIRunner.run(["eval", "--policy", Self.policy, "--response", fifo])
        let expected = try await CLIRunner.run([
            "eval", "--policy", Self.policy, "--response", "Examples/organization-admin.json",
        ])
        #expect(output.status == 0)
        #expect(output.stderr == "")
        #expect(output.stdout == expected.stdout)
    }

    @Test func walksEndOnLinkLoopsAndCountEachFileOnce() async throws {
        // A directory holding a policy and two links to itself: before, check/test/generate-swift never
        // finished (one link made the same file count 32 times).
        let directory = try Self.makeScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: Self.policy, toPath: directory + "/team.json")
        try Data(
            """
            { "format": "group-policy-tests/v1", "policy": "team.json",
              "cases": [ { "name": "no groups", "response": { "groups": [] }, "expect": { "capabilities": [] } } ] }
            """.utf8
        ).write(to: URL(fileURLWithPath: directory + "/team.tests.json"))
        try FileManager.default.createSymbolicLink(atPath: directory + "/loop-a", withDestinationPath: ".")
        try FileManager.default.createSymbolicLink(atPath: directory + "/loop-b", withDestinationPath: ".")

        let check = try await CLIRunner.run(["check", directory])
        #expect(check.status == 0)
        #expect(
            check.stdout
                == "checked 1 policy, 1 test file: 0 errors, 0 warnings, 5 invariants hold\npolicy revision c5d57356482477ba\n"
        )
        let test = try await CLIRunner.run(["test", directory])
        #expect(test.status == 0)
        #expect(test.stdout == "1 passed, 0 failed\n")
        let generated = try await CLIRunner.run(["generate-swift", directory])
        let single = try await CLIRunner.run(["generate-swift", directory + "/team.json"])
        #expect(generated.status == 0)
        #expect(generated.stdout == single.stdout)
    }

    /// A folder holding a policy over the size limit and a broken link: each is an error line of
    /// its own, the over-limit one in the `file:line:col: error:` form every finding has, and the
    /// tally counts both (it said "1 error", and the over-limit line had no `error:`).
    @Test func aFolderWithAnOverLimitFileAndABrokenLinkCountsBoth() async throws {
        let directory = try Self.makeScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: Self.policy, toPath: directory + "/team.json")
        try Data(repeating: UInt8(ascii: " "), count: (32 << 20) + 1)
            .write(to: URL(fileURLWithPath: directory + "/big.json"))
        try FileManager.default.createSymbolicLink(
            atPath: directory + "/broken.json",
            withDestinationPath: "nowhere.json"
        )

        let check = try await CLIRunner.run(["check", directory])
        #expect(check.status == 2)
        #expect(check.stdout == "checked 3 policies, 0 test files: 2 errors, 0 warnings, 5 invariants hold\n")
        #expect(
            check.stderr
                == "\(directory)/big.json:1:1: error: $: file of 33554433 bytes is over the limit of 33554432 bytes\n"
                + "Error: cannot read \(directory)/broken.json: no such file\n"
        )
    }

    /// Each file within its limit, but a folder of them over what one command reads (32 MiB
    /// together): `check` and `test` refuse at once, before reading any, naming the limit.
    @Test func aFolderOverWhatOneCommandReadsIsRefusedAtOnce() async throws {
        let directory = try Self.makeScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let policy = try Data(contentsOf: URL(fileURLWithPath: Self.policy))
        let padded = policy + Data(repeating: UInt8(ascii: " "), count: (17 << 20) - policy.count)
        try padded.write(to: URL(fileURLWithPath: directory + "/a.json"))
        try padded.write(to: URL(fileURLWithPath: directory + "/b.json"))
        let tests = Data(
            #"{ "format": "group-policy-tests/v1", "policy": "a.json", "cases": [] }"#.utf8
        )
        let paddedTests = tests + Data(repeating: UInt8(ascii: " "), count: (17 << 20) - tests.count)
        try paddedTests.write(to: URL(fileURLWithPath: directory + "/a.tests.json"))
        try paddedTests.write(to: URL(fileURLWithPath: directory + "/b.tests.json"))

        let check = try await CLIRunner.run(["check", directory])
        #expect(check.status == 2)
        #expect(check.stdout == "")
        #expect(
            check.stderr
                == "Error: \(directory)/b.json: the policy and test files of one command hold more than 33554432 bytes "
                + "together, over the limit of 33554432 bytes\n"
        )
        let test = try await CLIRunner.run(["test", directory])
        #expect(test.status == 2)
        #expect(
            test.stderr
                == "Error: \(directory)/b.tests.json: the policy and test files of one command hold more than "
                + "33554432 bytes together, over the limit of 33554432 bytes\n"
        )
    }
}
