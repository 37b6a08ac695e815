import AppStoreGroups
package import Foundation
import GroupDecisions
package import GroupDecisionsRedis
import GroupDecisionsTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

package struct RedisServerError: Error, CustomStringConvertible {
    package var description: String
}

/// A `redis-server` of one test's own on 127.0.0.1, without persistence, stopped by ``stop()`` or
/// when the object goes away.
package final class RedisServer: @unchecked Sendable {
    package let port: Int
    /// Arguments added to the server's command line, such as `--rename-command GET ""`.
    package let extraArguments: [String]
    private var process: Process

    /// Starts a server on a free port; a port taken between probing and starting is retried.
    package static func start(arguments: [String] = []) async throws -> RedisServer {
        try await offCooperativePool {
            var lastError: any Error = RedisServerError(description: "redis-server did not start")
            for _ in 0..<5 {
                do {
                    let port = try LoopbackSocket.freePort()
                    return RedisServer(port: port, extraArguments: arguments, process: try launch(port, arguments))
                } catch {
                    lastError = error
                }
            }
            throw lastError
        }
    }

    private init(port: Int, extraArguments: [String], process: Process) {
        self.port = port
        self.extraArguments = extraArguments
        self.process = process
    }

    /// Starts `redis-server` on `port` and waits until it accepts connections.
    private static func launch(_ port: Int, _ extraArguments: [String]) throws -> Process {
        // redis-server writes its pid file only after binding its port: a server that lost the
        // port to another test's server (two probes can see the same free port) exits instead,
        // and the other server's accepting connections is not taken for this one's.
        let pidFile = FileManager.default.temporaryDirectory.appendingPathComponent("redis-\(UUID().uuidString).pid")
            .path
        defer { try? FileManager.default.removeItem(atPath: pidFile) }
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments =
            [
                "redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--protected-mode", "yes", "--loglevel", "warning", "--pidfile", pidFile,
            ] + extraArguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let end = Date().addingTimeInterval(10)
        while Date() < end {
            if !process.isRunning { throw RedisServerError(description: "redis-server exited on port \(port)") }
            let started = (try? String(contentsOfFile: pidFile, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if started == String(process.processIdentifier) && LoopbackSocket.accepts(port: port) {
                return process
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        process.terminate()
        throw RedisServerError(description: "redis-server did not listen on port \(port) within 10 s")
    }

    deinit {
        stop()
    }

    /// Ends the server at once (SIGKILL) and waits, up to 5 seconds, until its port refuses
    /// connections.
    ///
    /// SIGKILL because a process started from one of Dispatch's threads inherits their blocked
    /// signals, SIGTERM included; and a wait on the port because `waitUntilExit()` spins a run
    /// loop that a cooperative thread never serves.
    package func stop() {
        let pid = process.processIdentifier
        guard pid > 0, process.isRunning else { return }
        kill(pid, SIGKILL)
        let end = Date().addingTimeInterval(5)
        while LoopbackSocket.accepts(port: port), Date() < end { Thread.sleep(forTimeInterval: 0.01) }
    }

    /// Stops the server and starts a new, empty one on the same port (a Redis restart).
    package func restart() async throws {
        try await offCooperativePool {
            self.stop()
            var lastError: any Error = RedisServerError(description: "redis-server did not restart")
            // The port was just released: a few tries absorb a slow release.
            for _ in 0..<5 {
                do {
                    self.process = try Self.launch(self.port, self.extraArguments)
                    return
                } catch {
                    lastError = error
                    Thread.sleep(forTimeInterval: 0.2)
                }
            }
            throw lastError
        }
    }

    /// A store on this server.
    ///
    /// Its calls time out after 10 s by default, not the product's 250 ms: a suite run under two
    /// busy loops saw store calls take longer than 250 ms (and 2 s); tests of timeouts pass their own.
    package func store(
        prefix: String = "test",
        timeout: Duration = .seconds(10),
        maximumConnections: Int = RedisGroupsCache.defaultMaximumConnections,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> RedisGroupsCache {
        try RedisGroupsCache(
            host: "127.0.0.1",
            port: port,
            keyPrefix: prefix,
            timeout: timeout,
            maximumConnections: maximumConnections,
            now: now
        )
    }
}

/// Plain POSIX sockets on 127.0.0.1 for the tests: a free port, a probe, and a listener that never
/// answers.
package final class LoopbackSocket: @unchecked Sendable {
    package let descriptor: Int32
    package let port: Int

    /// A socket listening on a free port that accepts nothing: connections complete in the kernel's
    /// backlog, and whatever is sent is never answered.
    package init(listening: Void) throws {
        let (descriptor, port) = try Self.bound()
        guard listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw RedisServerError(description: "listen failed")
        }
        self.descriptor = descriptor
        self.port = port
    }

    /// A socket bound to a free port that does not listen: a connection to the port is refused,
    /// and no other server can take the port while this socket lives (a port freed for a "dead"
    /// address could be taken by another test's server on a busy machine).
    package init(refusing: Void) throws {
        (descriptor, port) = try Self.bound()
    }

    deinit {
        close(descriptor)
    }

    /// A port nothing listens on right now; another server may take it at any moment, so a test
    /// that needs connections refused holds ``init(refusing:)`` instead.
    package static func freePort() throws -> Int {
        let (descriptor, port) = try bound()
        close(descriptor)
        return port
    }

    /// Whether something accepts connections on the port.
    package static func accepts(port: Int) -> Bool {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
        return address
    }

    private static func bound() throws -> (Int32, Int) {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw RedisServerError(description: "socket failed") }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound, named else {
            close(descriptor)
            throw RedisServerError(description: "bind failed")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
