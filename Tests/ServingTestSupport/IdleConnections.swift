import Foundation
import GroupPolicyTestSupport

/// Idle connections to a server on 127.0.0.1 that send nothing and never close, held by a child process
/// (Server/idle_connections.py) rather than by the test process.
///
/// Foundation's `Process.run()` on Linux reads past the end of glibc's `/proc/self/fd` buffer once the launching
/// process holds about 1,350 descriptors (swift-corelibs-foundation pull request 5472), so a test holding a thousand
/// sockets itself made any other test's child process launch crash the whole run.
package final class IdleConnections: Sendable {
    private let holder: PythonServer

    /// Starts the holder for `port`, holding no connection yet.
    package init(port: Int) throws {
        holder = try PythonServer("idle_connections.py", [String(port)])
    }

    /// Opens `count` more connections, returning once all are connected.
    package func open(_ count: Int) async throws {
        let holder = holder
        try await offCooperativePool {
            holder.input.fileHandleForWriting.write(Data("\(count)\n".utf8))
            guard try readFirstLine(holder.output.fileHandleForReading) == ("ok", []) else {
                throw HarnessError(message: "the idle connections' holder stopped before connecting \(count)")
            }
        }
    }

    /// Closes every connection: the holder exits when its standard input closes.
    package func close() { holder.closeInput() }
}
