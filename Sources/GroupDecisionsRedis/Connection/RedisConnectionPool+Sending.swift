import AppStoreGroups
import GroupDecisions

extension RedisConnectionPool: RedisCommandSending {
    /// Sends one command on a connection of the pool and returns its reply, within the timeout
    /// (``Settings/connectTimeout``: waiting for a connection, connecting and the reply together).
    ///
    /// - Parameter command: The command, its label and whether it may be sent twice.
    /// - Returns: The reply.
    /// - Throws: `AppStoreGroupsError.Code.sharedCacheFailure` naming the server, the command's
    ///   label and why; `AppStoreGroupsError.Code.cancelled` when the task was cancelled.
    func send(_ command: RedisCommand) async throws(AppStoreGroupsError) -> RESPReply {
        let request = RedisRequest(
            commands: [command.arguments],
            label: command.label,
            deadline: .now + settings.connectTimeout,
            isIdempotent: command.isIdempotent
        )
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                request.install(continuation)
                if !request.isFinished { submit(request) }
            }
        } onCancel: {
            cancel(request)
        }
        let server = "Redis at \(settings.host):\(settings.port)"
        switch result {
        case .success(let replies):
            guard replies.count == 1, let reply = replies.first else {
                throw AppStoreGroupsError(
                    code: .sharedCacheFailure,
                    message: "\(server): \(command.label): replies missing"
                )
            }
            return reply
        case .failure(let failure):
            throw AppStoreGroupsError(
                code: failure.kind == .cancelled ? .cancelled : .sharedCacheFailure,
                message: "\(server): \(command.label): \(failure.message)"
            )
        }
    }
}
