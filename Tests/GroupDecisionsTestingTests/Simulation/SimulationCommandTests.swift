import Foundation
import ServingTestSupport
import Testing

/// `group-decisions-simulation`: a line per violation, then `N seeds, V violations`; an exit status per way it ends.
@Suite("group-decisions-simulation: output and exit statuses")
struct SimulationCommandTests {
    /// The binary next to the test bundle (both live in the build products directory).
    static let binary: URL = {
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [
            products.appendingPathComponent("group-decisions-simulation"),
            products.deletingLastPathComponent().appendingPathComponent("group-decisions-simulation"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
    }()

    @Test("seeds with no violation: the last line counts them, exit 0")
    func noViolation() async throws {
        let output = try await runProcess(
            Self.binary,
            ["--seeds", "3", "--seed", "5", "--steps", "30", "--faults", "slow-answers"]
        )
        #expect(output.standardOutput == "3 seeds, 0 violations\n")
        #expect(output.standardError == "")
        #expect(output.status == 0)
    }

    @Test(
        "bad arguments: an Error: line and the usage on standard error, exit 2",
        arguments: [
            (["--seeds", "0"], "Error: --seeds needs a whole number from 1 to 100000000, not '0'"),
            (["--services", "x"], "Error: --services needs a whole number from 1 to 64, not 'x'"),
            (["--cache", "disk"], "Error: --cache takes in-memory or wall-clock, not 'disk'"),
            (["--redis", "localhost"], "Error: --redis needs host:port with a port from 1 to 65535, not 'localhost'"),
            (["--faults", "cut-off,fire"], "Error: --faults takes none or names from "),
            (["--seed", "-1"], "Error: --seed needs a whole number from 0 to 18446744073709551615, not '-1'"),
            (["--sedes", "3"], "Error: unknown option '--sedes' (did you mean '--seeds'?)"),
        ]
    )
    func badArguments(_ arguments: [String], _ error: String) async throws {
        let output = try await runProcess(Self.binary, arguments)
        #expect(output.standardError.hasPrefix(error))
        #expect(output.standardError.contains("\nUsage: group-decisions-simulation [options]\n"))
        #expect(output.standardOutput == "")
        #expect(output.status == 2)
    }

    @Test("a store that cannot be reached: an Error: line, the seeds that ran, exit 3")
    func unreachableStore() async throws {
        let refusing = try LoopbackSocket(refusing: ())
        let output = try await runProcess(Self.binary, ["--seeds", "2", "--redis", "127.0.0.1:\(refusing.port)"])
        #expect(output.standardError.hasPrefix("Error: seed 1: "))
        #expect(output.standardOutput == "0 seeds, 0 violations\n")
        #expect(output.status == 3)
    }
}
