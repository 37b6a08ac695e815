import Synchronization

#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// The ``HTTPTransport`` for production: `URLSession` with an ephemeral configuration (no cookies,
/// no cache, no stored credentials).
///
/// It reads the body as it arrives, so an answer over the size limit is dropped as soon as its
/// `Content-Length` or its running size says so, never buffered whole. It refuses every redirect
/// and returns the 3xx answer as it is. The timeout covers the whole exchange, not just idle time.
public final class URLSessionTransport: HTTPTransport {
    private let session: URLSession
    private let delegate: Delegate

    /// Where every transport's deadlines fire: a serial queue of its own, so a deadline never
    /// waits for a cooperative thread.
    private static let deadlines = DispatchQueue(label: "AppStoreGroups.URLSessionTransport.deadlines")

    /// Creates a transport with its own session.
    ///
    /// - Parameter configuration: The session configuration; by default an ephemeral one that
    ///   keeps no cookies, cache or credentials.
    public init(configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration()) {
        let delegate = Delegate()
        self.delegate = delegate
        self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// An ephemeral configuration that sets no cookies and caches nothing.
    ///
    /// - Returns: A new configuration.
    public static func defaultConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }

    /// Sends the request; see ``HTTPTransport/send(_:)``.
    ///
    /// - Parameter request: The request, with its timeout and body limit.
    /// - Returns: The whole answer.
    /// - Throws: ``AppStoreGroupsError`` for a timeout, an oversized body or a failed connection;
    ///   `CancellationError` when the task is cancelled.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headerFields { urlRequest.setValue(value, forHTTPHeaderField: name) }
        let seconds = Double(request.timeout.components.seconds) + Double(request.timeout.components.attoseconds) / 1e18
        // Foundation's own timer on Linux counts whole seconds, cut down (3.999 s fired at 3 s);
        // rounded up it never fires before the deadline below, which is exact.
        urlRequest.timeoutInterval = seconds.rounded(.up)
        let task = session.dataTask(with: urlRequest)
        let delegate = self.delegate
        // A Dispatch timer, not a Task: the deadline must fire on time even while the app's own
        // work keeps every thread of Swift's cooperative pool busy.
        let deadline = DispatchWorkItem { delegate.expire(task) }
        defer { deadline.cancel() }
        try Task.checkCancellation()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                delegate.start(task, limit: request.maximumResponseBodySize, continuation: continuation)
                // Armed once the task is registered, so even a tiny timeout finds it to expire.
                Self.deadlines.asyncAfter(deadline: .now() + seconds, execute: deadline)
            }
        } onCancel: {
            task.cancel()
        }
    }

    /// Keeps each running task's body and continuation, and answers the session's questions.
    private final class Delegate: NSObject, URLSessionDataDelegate, Sendable {
        private struct Pending {
            var continuation: CheckedContinuation<HTTPResponse, any Error>
            var limit: Int
            var body: [UInt8] = []
        }

        private let pending = Mutex<[Int: Pending]>([:])

        func start(_ task: URLSessionDataTask, limit: Int, continuation: CheckedContinuation<HTTPResponse, any Error>) {
            pending.withLock { $0[task.taskIdentifier] = Pending(continuation: continuation, limit: limit) }
            task.resume()
        }

        /// Called at the deadline: the task ends as a timeout, not as a cancellation.
        func expire(_ task: URLSessionTask) {
            finish(
                task,
                throwing: AppStoreGroupsError(
                    code: .timeout,
                    message: "no complete answer from \(Self.host(of: task)) within the timeout"
                )
            )
        }

        /// Ends the call at once with `failure`, then cancels the task.
        ///
        /// The caller does not wait for the task to complete: on Linux a cancel is queued behind
        /// the session's reading, which goes on at the network's pace and piles up data for this
        /// delegate meanwhile (an endless body from a loopback server reached 2.5 GB and 14 s before
        /// the cancel took effect). What still arrives for the task finds no entry and is dropped.
        private func finish(_ task: URLSessionTask, throwing failure: AppStoreGroupsError) {
            guard let entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            entry.continuation.resume(throwing: failure)
            task.cancel()
        }

        private static func tooLarge(_ limit: Int) -> AppStoreGroupsError {
            AppStoreGroupsError(code: .responseTooLarge, message: "the answer's body is larger than \(limit) bytes")
        }

        private static func host(of task: URLSessionTask) -> String {
            task.originalRequest?.url?.host ?? "the server"
        }

        func urlSession(
            _ session: URLSession,
            dataTask: URLSessionDataTask,
            didReceive response: URLResponse,
            completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
        ) {
            let limit = pending.withLock { $0[dataTask.taskIdentifier]?.limit } ?? 0
            // A length too large for the platform's number (10^23) reads as "unknown" there, and
            // waiting for such a body only ends at the timeout: the header is read here too.
            let announced = (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Length")
                .flatMap(HTTPResponse.announcedLength)
            if response.expectedContentLength > Int64(limit) || (announced ?? 0) > limit {
                completionHandler(.cancel)
                // The disposition alone does not end the task on every platform while the server
                // keeps the connection open; the cancel that `finish` adds does.
                finish(dataTask, throwing: Self.tooLarge(limit))
                return
            }
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            let overLimit = pending.withLock { tasks -> Int? in
                guard var entry = tasks[dataTask.taskIdentifier] else { return nil }
                guard entry.body.count + data.count <= entry.limit else { return entry.limit }
                tasks[dataTask.taskIdentifier] = nil  // so the body grows in place instead of being copied
                entry.body.append(contentsOf: data)
                tasks[dataTask.taskIdentifier] = entry
                return nil
            }
            if let overLimit { finish(dataTask, throwing: Self.tooLarge(overLimit)) }
        }

        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest,
            completionHandler: @escaping @Sendable (URLRequest?) -> Void
        ) {
            completionHandler(nil)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            guard let entry = pending.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
            if let error {
                entry.continuation.resume(throwing: Self.transportError(error, task: task))
            } else if let response = task.response as? HTTPURLResponse {
                var fields: [String: String] = [:]
                for (name, value) in response.allHeaderFields {
                    if let name = name as? String, let value = value as? String { fields[name] = value }
                }
                entry.continuation.resume(
                    returning: HTTPResponse(status: response.statusCode, headerFields: fields, body: entry.body)
                )
            } else {
                entry.continuation.resume(
                    throwing: AppStoreGroupsError(code: .transportFailure, message: "the answer is not HTTP")
                )
            }
        }

        private static func transportError(_ error: any Error, task: URLSessionTask) -> any Error {
            guard let urlError = error as? URLError else {
                return AppStoreGroupsError(code: .transportFailure, message: "the request failed: \(error)")
            }
            switch urlError.code {
            case .cancelled:
                return CancellationError()
            case .timedOut:
                return AppStoreGroupsError(
                    code: .timeout,
                    message: "no complete answer from \(host(of: task)) within the timeout"
                )
            default:
                return AppStoreGroupsError(
                    code: .transportFailure,
                    message: "the request to \(host(of: task)) failed: URLError \(urlError.code.rawValue) "
                        + urlError.localizedDescription
                )
            }
        }
    }
}
