package import Foundation
import GroupDecisions
package import GroupDecisionsRedis

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `redis-server` of one test's own on 127.0.0.1, without persistence, stopped by ``stop()`` or when released: the
/// tests' one Redis fixture, where the processes of a fleet (each a store and a service) share one Redis.
///
/// Started with a delay, it has a ``RedisDelayProxy`` in front of it, which counts round trips and
/// holds each command that long; stores reach the server through it unless asked for a direct one.
/// Give stores the services' clock (`now:`) so that a fetch time is never in a store's future.
package final class RedisServer: @unchecked Sendable {
    package let port: Int
    /// Arguments added to the server's command line, such as `--rename-command GET ""`.
    package let extraArguments: [String]
    /// The proxy in front of the server, when it was started with a delay.
    package private(set) var proxy: RedisDelayProxy?
    private var process: Process

    /// Starts a server on a free port (a port taken between probing and starting is retried), and a
    /// proxy in front of it holding each command for `proxyDelay` when one is given.
    package static func start(arguments: [String] = [], proxyDelay: Duration? = nil) async throws -> RedisServer {
        let server = try await offCooperativePool {
            try fiveTries {
                let port = try LoopbackSocket.freePort()
                return RedisServer(port: port, extraArguments: arguments, process: try launch(port, arguments))
            }
        }
        do {
            server.proxy = try proxyDelay.map { try RedisDelayProxy(upstreamPort: server.port, delay: $0) }
        } catch {
            await server.stopAndWait()
            throw error
        }
        return server
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
            if !process.isRunning { throw HarnessError(message: "redis-server exited on port \(port)") }
            let started = (try? String(contentsOfFile: pidFile, encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if started == String(process.processIdentifier) && LoopbackSocket.accepts(port: port) {
                return process
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        process.terminate()
        throw HarnessError(message: "redis-server did not listen on port \(port) within 10 s")
    }

    deinit {
        stop()
    }

    /// Stops the proxy and ends the server (SIGKILL) without waiting for it to go: for `defer` and `deinit`, after
    /// which nothing needs the port closed, and which may run on one of Swift's cooperative threads.
    package func stop() {
        proxy?.stop()
        signalKill()
    }

    /// Stops the proxy and ends the server, returning once its port refuses connections.
    ///
    /// For a test that goes on to use Redis being gone; the wait (at most 5 s) runs off Swift's cooperative threads.
    package func stopAndWait() async {
        proxy?.stop()
        _ = try? await offCooperativePool { self.kill() }
    }

    /// Ends the server at once (SIGKILL) and waits, blocking, up to 5 seconds, until its port
    /// refuses connections; the proxy, if any, stays.
    ///
    /// SIGKILL because a process started from one of Dispatch's threads inherits their blocked signals, SIGTERM
    /// included; a wait on the port because `waitUntilExit()` spins a run loop no cooperative thread serves.
    private func kill() {
        guard signalKill() else { return }
        let end = Date().addingTimeInterval(5)
        while LoopbackSocket.accepts(port: port), Date() < end { Thread.sleep(forTimeInterval: 0.01) }
    }

    /// Sends the server SIGKILL; false when it had already ended.
    @discardableResult
    private func signalKill() -> Bool {
        let pid = process.processIdentifier
        guard pid > 0, process.isRunning else { return false }
        #if canImport(Glibc)
        Glibc.kill(pid, SIGKILL)
        #else
        Darwin.kill(pid, SIGKILL)
        #endif
        return true
    }

    /// Ends the server and starts a new, empty one on the same port (a Redis restart).
    package func restart() async throws {
        try await offCooperativePool {
            self.kill()
            // The port was just released: a few tries absorb a slow release.
            self.process = try Self.fiveTries(pause: 0.2) { try Self.launch(self.port, self.extraArguments) }
        }
    }

    /// What `body` returns on the first of five tries that does not throw, or the fifth's error.
    private static func fiveTries<T>(pause: TimeInterval = 0, _ body: () throws -> T) throws -> T {
        for _ in 0..<4 {
            if let value = try? body() { return value }
            Thread.sleep(forTimeInterval: pause)
        }
        return try body()
    }

    /// A store on this server under `prefix`, through the proxy when there is one (unless `direct`).
    ///
    /// Its calls time out after 2 minutes by default, not the product's 250 ms: a suite run under two busy loops saw
    /// store calls take longer than 250 ms (and 2 s), and under a load of 20 one took more than 10 s, the default
    /// before, which a service then met as a failed shared cache. Tests of timeouts pass their own.
    ///
    /// Its idle connections stay open for a day, not the product's minute: a test that counts the connections opened
    /// (the pool's width) ran for minutes beside a loaded CI, a connection opened early sat idle past a minute and was
    /// closed, and the pool opened one more.
    package func store(
        prefix: String = "test",
        timeout: Duration = .seconds(120),
        maximumConnections: Int = RedisGroupsCache.defaultMaximumConnections,
        now: @escaping @Sendable () -> Date = { Date() },
        direct: Bool = false
    ) throws -> RedisGroupsCache {
        try RedisGroupsCache(
            host: "127.0.0.1",
            port: direct ? port : proxy?.port ?? port,
            keyPrefix: prefix,
            timeout: timeout,
            maximumConnections: maximumConnections,
            maximumValueBytes: 2 << 20,
            maximumClockSkew: .seconds(5),
            now: now,
            idleLifetime: .seconds(86_400)
        )
    }

    /// Two stores under one prefix: two processes of a fleet.
    package func pair(
        prefix: String,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> (RedisGroupsCache, RedisGroupsCache) {
        (try store(prefix: prefix, now: now), try store(prefix: prefix, now: now))
    }
}

/// Plain POSIX sockets on 127.0.0.1 for the tests: a free port, a probe, and a listener that never answers.
package final class LoopbackSocket: @unchecked Sendable {
    package let descriptor: Int32
    package let port: Int

    /// A socket listening on a free port that accepts nothing: connections complete in the kernel's
    /// backlog, and whatever is sent is never answered.
    package init(listening: Void) throws {
        let (descriptor, port) = try Self.bound()
        guard listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw HarnessError(message: "listen failed")
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

    /// A Redis store whose server is this socket: one that never answers, or a connection refused.
    package func store(prefix: String = "test", timeout: Duration = .milliseconds(250)) throws -> RedisGroupsCache {
        try RedisGroupsCache(host: "127.0.0.1", port: port, keyPrefix: prefix, timeout: timeout)
    }

    /// Whether something accepts connections on the port.
    package static func accepts(port: Int) -> Bool {
        guard let descriptor = dial(port) else { return false }
        close(descriptor)
        return true
    }

    /// A socket connected to the port on 127.0.0.1 (`nil` when refused), `configure`d before it
    /// connects; a non-blocking one is returned still connecting.
    package static func dial(
        _ port: Int,
        blocking: Bool = true,
        configure: (Int32) -> Void = { _ in }
    ) -> Int32? {
        let descriptor = newSocket()
        guard descriptor >= 0 else { return nil }
        configure(descriptor)
        if !blocking { makeNonBlocking(descriptor) }
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected || !blocking else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    /// Sends every byte, waiting while the socket is full; `false` when the connection failed.
    @discardableResult
    package static func transmit(_ bytes: [UInt8], on descriptor: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Turns off Nagle's delay, as Redis does: a reply written in two sends must not wait for the first's ACK.
    package static func setNoDelay(_ descriptor: Int32) {
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Makes reads and writes on the socket return at once rather than wait.
    package static func makeNonBlocking(_ descriptor: Int32) {
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL, 0) | O_NONBLOCK)
    }

    private static func newSocket() -> Int32 {
        #if canImport(Glibc)
        return socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        return socket(AF_INET, SOCK_STREAM, 0)
        #endif
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr = in_addr(s_addr: UInt32(0x7f00_0001).bigEndian)
        return address
    }

    private static func bound() throws -> (Int32, Int) {
        let descriptor = newSocket()
        guard descriptor >= 0 else { throw HarnessError(message: "socket failed") }
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
            throw HarnessError(message: "bind failed")
        }
        return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
    }
}
