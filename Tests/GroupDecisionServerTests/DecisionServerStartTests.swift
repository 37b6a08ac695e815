import Foundation
import ServingTestSupport
import Testing

/// What group-decision-server refuses before it listens, each with one line naming the flag or
/// variable and exit status 2, and the options its help lists.
@Suite("Decision server: what it refuses at start, and its help")
struct DecisionServerStartTests {
    static let tooLong = "must be at most 10 years (315360000 seconds)"
    static let fraction = "must be a fraction from 0 (never) to less than 1"
    static let millisecond =
        "must be 0 (never) or a fraction giving at least a millisecond of --cache-ttl (300 seconds)"

    @Test(
        "a bad option or variable is refused with one line naming it, before the server listens",
        arguments: [
            (["--max-age", "299"], [:], "Error: --max-age must be at least --cache-ttl (300 seconds), not '299'"),
            (
                ["--cache-ttl", "7200", "--max-age", "3600"], [:],
                "Error: --max-age must be at least --cache-ttl (7200 seconds), not '3600'"
            ),
            (["--max-age", "0"], [:], "Error: --max-age must be a positive number of seconds, not '0'"),
            (["--refresh-ahead", "1"], [:], "Error: --refresh-ahead \(fraction), not '1'"),
            (["--refresh-ahead", "-0.5"], [:], "Error: --refresh-ahead \(fraction), not '-0.5'"),
            (["--refresh-ahead", "nan"], [:], "Error: --refresh-ahead \(fraction), not 'nan'"),
            // The longest Int64 of seconds overflowed a shared cache's milliseconds on the first
            // decision; the configuration refuses it before the server starts.
            (
                ["--cache-ttl", "9223372036854775807", "--redis", "127.0.0.1:1"], [:],
                "Error: --cache-ttl \(tooLong), not '9223372036854775807'"
            ),
            (["--max-age", "315360001"], [:], "Error: --max-age \(tooLong), not '315360001'"),
            // A reload interval had no upper bound: the largest Int64 of seconds started the
            // server, then the first sleep of the policy store's reload loop trapped ("Not enough
            // bits to represent the passed value") and the process died of SIGILL within a second.
            (
                ["--reload-interval", "9223372036854775807"], [:],
                "Error: --reload-interval \(tooLong), not '9223372036854775807'"
            ),
            // A fraction whose share of --cache-ttl is no time at all was refused naming the
            // library's freshness.refreshAfter, not the flag.
            (["--refresh-ahead", "1e-300"], [:], "Error: --refresh-ahead \(millisecond), not '1e-300'"),
            (["--refresh-ahead", "1e-6"], [:], "Error: --refresh-ahead \(millisecond), not '1e-6'"),
            (
                ["--host", "0.0.0.0"], [:],
                "Error: listening on 0.0.0.0 needs --admin-token-file (GROUP_DECISION_SERVER_ADMIN_TOKEN_FILE): "
                    + "POST /invalidate and POST /shadow/reset must not be open to whoever reaches the port"
            ),
            (
                [], ["GROUP_DECISION_SERVER_CACHE_TTL": "soon"],
                "Error: GROUP_DECISION_SERVER_CACHE_TTL must be a positive number of seconds, not 'soon'"
            ),
            // The flag wins over its variable: the flag is checked, the variable never read.
            (
                ["--cache-ttl", "0"], ["GROUP_DECISION_SERVER_CACHE_TTL": "soon"],
                "Error: --cache-ttl must be a positive number of seconds, not '0'"
            ),
            (
                [], ["DECISION_LOG_SALT": String(repeating: "x", count: 40)],
                "Error: DECISION_LOG_SALT: the decision log's salt must have at least 8 distinct byte values, "
                    + "not 1: use random bytes, such as the output of openssl rand -hex 32"
            ),
        ] as [([String], [String: String], String)]
    )
    func refused(arguments: [String], environment: [String: String], line: String) async throws {
        let result = try await DecisionServerProcess.runToExit(arguments, environment: environment)
        #expect(result.status == 2)
        #expect(result.standardError.split(separator: "\n").first.map(String.init) == line)
        #expect(!result.standardOutput.contains("listening"))
    }

    /// A huge file, a FIFO nobody writes, a directory or a symbolic link loop is refused without being read whole; a
    /// symbolic link to a regular file (a mounted secret) is read; a FIFO given for the policies (read again every
    /// reload interval) held the start, without a line, until something wrote to it.
    @Test("a secret's file, the policies or the decision log that is no small regular file is refused at once")
    func filesRefused() async throws {
        let directory = URL(filePath: NSTemporaryDirectory()).appending(path: "start-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let huge = directory.appending(path: "huge").path
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        #expect(truncate(huge, 1 << 30) == 0)
        let fifo = directory.appending(path: "fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let loop = directory.appending(path: "loop").path
        try FileManager.default.createSymbolicLink(atPath: loop, withDestinationPath: loop)
        let token = directory.appending(path: "token").path
        try "0123456789abcdef0123456789abcdef\n".write(toFile: token, atomically: true, encoding: .utf8)
        let linked = directory.appending(path: "linked").path
        try FileManager.default.createSymbolicLink(atPath: linked, withDestinationPath: token)
        let offLoopback = ["--host", "0.0.0.0", "--admin-token-file"]
        let reread = "is a FIFO: give a policy file or directory (it is read again every --reload-interval)"
        let cases: [(arguments: [String], key: String?, line: String)] = [
            (
                offLoopback + [huge], nil,
                "Error: --admin-token-file: \(huge): file of 1073741824 bytes is over the limit of 4096 bytes"
            ),
            (offLoopback + [fifo], nil, "Error: --admin-token-file: \(fifo) is a FIFO, not a regular file"),
            (
                offLoopback + [directory.path], nil,
                "Error: --admin-token-file: \(directory.path) is a directory, not a regular file"
            ),
            (
                offLoopback + [loop], nil,
                "Error: --admin-token-file: cannot read \(loop): too many levels of symbolic links"
            ),
            (
                offLoopback + [linked], huge,
                "Error: APP_STORE_PRIVATE_KEY_PATH: \(huge): file of 1073741824 bytes is over the limit of 65536 bytes"
            ),
            (offLoopback + [linked], fifo, "Error: APP_STORE_PRIVATE_KEY_PATH: \(fifo) is a FIFO, not a regular file"),
            (["--policies", fifo], nil, "Error: --policies \(fifo) \(reread)"),
            (["--candidate-policies", fifo], nil, "Error: --candidate-policies \(fifo) \(reread)"),
            (
                ["--decision-log", fifo], nil,
                "Error: cannot open the decision log \(fifo): it is a FIFO and nothing reads it; start its reader first"
            ),
        ]
        for (arguments, key, line) in cases {
            let salt = ["DECISION_LOG_SALT": "a salt of sixteen bytes or more"]
            let result = try await DecisionServerProcess.runToExit(
                arguments,
                environment: key.map { ["APP_STORE_PRIVATE_KEY_PATH": $0] } ?? salt
            )
            #expect(result.status == 2, "\(line)")
            #expect(result.standardError.split(separator: "\n").first.map(String.init) == line)
            #expect(!result.standardOutput.contains("listening"))
            // A decision log nothing reads stops the server with that one line alone.
            if arguments.first == "--decision-log" { #expect(result.standardError == line + "\n") }
        }
    }

    @Test("--help lists every option with its variable, and names the rule, never a value")
    func help() async throws {
        let result = try await runProcess(
            DecisionServerProcess.binary(),
            ["--help"],
            environment: DecisionServerProcess.credentials.merging([
                "DECISION_LOG_SALT": "a-salt-that-must-stay-secret-0123"
            ]) { $1 }
        )
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("GROUP_DECISION_SERVER_CACHE_TTL=600"))
        #expect(result.standardOutput.contains("--max-age <seconds>"))
        #expect(result.standardOutput.contains("--refresh-ahead <fraction>"))
        #expect(!result.standardOutput.contains("a-salt-that-must-stay-secret-0123"))
        #expect(!result.standardOutput.contains(FakeAppStore.keyID))
    }
}
