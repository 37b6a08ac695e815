import AppStoreGroups
import GroupDecisions
import GroupPolicy
import Synchronization

/// One call to Redis: the commands a caller sends together on one connection, the replies it waits
/// for, its deadline, and the continuation that receives the outcome exactly once.
///
/// The caller's task, a cancellation handler and the pool's thread may all try to finish it; the
/// first wins and the others do nothing. The fields marked "pool thread only" are touched by
/// ``RedisConnectionPool``'s thread alone, which is what makes the class safe to share.
final class RedisRequest: @unchecked Sendable {
    /// The commands, each an array of arguments, sent in one write.
    let commands: [[[UInt8]]]
    /// What errors call the operation, such as `GET answer`: a command and a purpose, never a key.
    let label: String
    /// When the call fails with a timeout, wherever it is: waiting for a connection, connecting,
    /// sending or waiting for the replies.
    let deadline: ContinuousClock.Instant
    /// Whether running the commands twice has the effect of running them once, so a connection
    /// lost before any reply byte may be replaced and the commands sent again.
    let isIdempotent: Bool

    /// Where the request is (pool thread only).
    var stage = Stage.submitted
    /// Whether it already failed once on a pooled connection that turned out dead (pool thread
    /// only): the second attempt goes to a connection opened for it, and there is no third.
    var isRetry = false

    enum Stage {
        case submitted
        case waiting
        case running
        case done
    }

    private struct Outcome {
        var continuation: CheckedContinuation<Result<[RESPReply], RedisFailure>, Never>?
        var result: Result<[RESPReply], RedisFailure>?
    }

    private let outcome = Mutex(Outcome())

    init(commands: [[[UInt8]]], label: String, deadline: ContinuousClock.Instant, isIdempotent: Bool) {
        self.commands = commands
        self.label = label
        self.deadline = deadline
        self.isIdempotent = isIdempotent
    }

    /// Whether an outcome has been delivered (or is about to be).
    var isFinished: Bool { outcome.withLock { $0.result != nil } }

    /// Hands over the caller's continuation; resumes it at once when the request already finished
    /// (cancelled before it was submitted, say).
    func install(_ continuation: CheckedContinuation<Result<[RESPReply], RedisFailure>, Never>) {
        let finished = outcome.withLock { state -> Result<[RESPReply], RedisFailure>? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let finished { continuation.resume(returning: finished) }
    }

    /// Delivers the outcome unless another one came first.
    ///
    /// - Returns: Whether this call delivered it.
    @discardableResult
    func finish(_ result: Result<[RESPReply], RedisFailure>) -> Bool {
        let (won, continuation) = outcome.withLock { state in
            guard state.result == nil else {
                return (false, nil as CheckedContinuation<Result<[RESPReply], RedisFailure>, Never>?)
            }
            state.result = result
            defer { state.continuation = nil }
            return (true, state.continuation)
        }
        continuation?.resume(returning: result)
        return won
    }
}

/// Why a Redis call failed, in words that name no key and repeat nothing the server wrote.
struct RedisFailure: Error {
    /// How the call failed, for the retry rule and the error's code.
    enum Kind {
        /// The deadline passed.
        case timeout
        /// The connection was closed or reset.
        case connectionLost
        /// The server's bytes were not the replies asked for.
        case protocolViolation
        /// The caller's task was cancelled.
        case cancelled
        /// The store was closed.
        case closed
        /// Anything else: resolving, connecting, a socket call.
        case other
    }

    var message: String
    var kind: Kind

    init(_ message: String, kind: Kind = .other) {
        self.message = message
        self.kind = kind
    }

    static let closed = RedisFailure("the store is closed", kind: .closed)
    static let cancelled = RedisFailure("cancelled", kind: .cancelled)
}
