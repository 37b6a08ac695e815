import HTTPServing
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every answered request, for the access log and the request metrics: the event loop only
/// appends a record under a short lock; a thread of its own formats the lines and counts them
/// every 20 ms (and `/metrics` drains what is waiting first, so its counts are exact).
///
/// Measured: handing the log one line per request woke its writer's queue for nearly every
/// request, a sixth of the server's time on cache hits.
final class AccessRecorder: Sendable {
    private struct Record {
        var method: String?
        var path: String?
        var status: Int
        var duration: Duration
    }

    private let waiting = Mutex<[Record]>([])
    /// Held while records are written and counted, so that they are written in order.
    private let draining = Mutex(())
    private let metrics: ServerMetrics

    init(metrics: ServerMetrics) {
        self.metrics = metrics
    }

    /// Starts the thread that writes what is waiting every 20 ms.
    func start() {
        Thread.detach { [self] in
            while true {
                usleep(20_000)
                drain()
            }
        }
    }

    /// Records one answered request (on the event loop).
    func record(_ exchange: HTTPExchange) {
        let record = Record(
            method: exchange.method,
            path: exchange.path,
            status: exchange.status,
            duration: exchange.duration
        )
        waiting.withLock { $0.append(record) }
    }

    /// Writes and counts what is waiting.
    func drain() {
        draining.withLock { _ in
            let records = waiting.withLock { records in
                let taken = records
                records.removeAll(keepingCapacity: true)
                return taken
            }
            for record in records {
                metrics.answered(path: record.path, status: record.status, duration: record.duration)
                // The method and path are the client's bytes, escaped by the log, so a forged line
                // cannot be injected.
                let (seconds, attoseconds) = record.duration.components
                let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
                ServerLog.line("\(record.method ?? "-") \(record.path ?? "-") \(record.status) \(milliseconds) ms")
            }
        }
    }
}

/// A detached thread, without Foundation's.
private enum Thread {
    static func detach(_ body: @escaping @Sendable () -> Void) {
        final class Box {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        #if canImport(Glibc)
        var thread = pthread_t()
        #else
        var thread: pthread_t?
        #endif
        _ = pthread_create(
            &thread,
            nil,
            { pointer in
                #if canImport(Glibc)
                guard let pointer else { return nil }
                #endif
                Unmanaged<Box>.fromOpaque(pointer).takeRetainedValue().body()
                return nil
            },
            box
        )
        #if canImport(Glibc)
        pthread_detach(thread)
        #else
        if let thread { pthread_detach(thread) }
        #endif
    }
}
