import Foundation
import GroupPolicyTestSupport
import Testing

/// Runs the built `group-policy` binary and captures what it prints and how it exits.
struct CLIRunner {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static let packageRoot: String = {
        var path = #filePath
        for _ in 0..<3 {
            guard let slash = path.lastIndex(of: "/") else { break }
            path = String(path[..<slash])
        }
        return path
    }()

    /// The binary next to the test bundle (both live in the build products directory).
    static let binary: String = {
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [
            products.appendingPathComponent("group-policy").path,
            products.deletingLastPathComponent().appendingPathComponent("group-policy").path,
            packageRoot + "/.build/debug/group-policy",
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[2]
    }()

    /// Runs the binary on a thread of its own, not Swift's cooperative pool: the whole
    /// package's tests run in one process, and a test blocked on a child process would otherwise
    /// hold one of the pool's threads (two on a two-core machine), stalling every timing-sensitive
    /// test of the other suites.
    static func run(
        _ arguments: [String],
        stdin: String? = nil,
        environment: [String: String]? = nil,
        executable: String = binary
    ) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            // A thread of its own: Dispatch's global queues are as narrow as the cooperative pool.
            Thread {
                continuation.resume(
                    with: Result {
                        try runBlocking(executable, arguments, stdin: stdin, environment: environment)
                    }
                )
            }
            .start()
        }
    }

    private static func runBlocking(
        _ executable: String,
        _ arguments: [String],
        stdin: String?,
        environment: [String: String]?
    ) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: packageRoot)
        if let environment { process.environment = environment }
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try input.fileHandleForWriting.close()
        let stdoutData = try out.fileHandleForReading.readBytesToEnd()
        let stderrData = try err.fileHandleForReading.readBytesToEnd()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus,
            stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: stderrData, as: UTF8.self)
        )
    }
}
