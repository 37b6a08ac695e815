import Foundation
import GroupPolicyTestSupport
import Synchronization

/// Idle connections to a server on 127.0.0.1 that send nothing and never close, held by a child
/// process (Server/idle_connections.py) rather than by the test process.
///
/// Foundation's `Process.run()` on Linux reads past the end of glibc's `/proc/self/fd` buffer once
/// the launching process holds about 1,350 descriptors (swift-corelibs-foundation pull request
/// 5472), so a test holding a thousand sockets itself made any other test's child process launch
/// crash the whole run.
package final class IdleConnections: @unchecked Sendable {
    private let process: Process
    private let input: Pipe
    private let output: Pipe
    private let closed = Mutex(false)

    /// Starts the holder for `port`, holding no connection yet.
    package init(port: Int) throws {
        (process, input, output) = try launchPython(
            TestFiles.testsDirectory.appending(path: "Server/idle_connections.py"),
            [String(port)]
        )
    }

    deinit { close() }

    /// Opens `count` more connections, returning once all are connected.
    package func open(_ count: Int) async throws {
        let input = input
        let output = output
        try await offCooperativePool {
            input.fileHandleForWriting.write(Data("\(count)\n".utf8))
            guard try readFirstLine(output.fileHandleForReading) == ("ok", []) else {
                throw FakeAppStoreError(message: "the idle connections' holder stopped before connecting \(count)")
            }
        }
    }

    /// Closes every connection: the holder exits when its standard input closes.
    package func close() {
        guard
            !closed.withLock({ wasClosed in
                defer { wasClosed = true }
                return wasClosed
            })
        else { return }
        try? input.fileHandleForWriting.close()
    }
}
