/// Sends one HTTP request and returns the answer: the seam between the client and the network.
///
/// ``URLSessionTransport`` is the implementation for production; tests and proxies may supply
/// their own. A transport must:
/// - never follow a redirect: return the 3xx answer as it is (the client reports it as
///   ``AppStoreGroupsError/Code/unexpectedRedirect``), so the `Authorization` header never
///   reaches another host;
/// - read at most ``HTTPRequest/maximumResponseBodySize`` body bytes, throwing
///   ``AppStoreGroupsError/Code/responseTooLarge`` past it (the client checks again);
/// - give up after ``HTTPRequest/timeout``, throwing ``AppStoreGroupsError/Code/timeout``;
/// - honour task cancellation.
///
/// Any other error it throws is treated as a transport failure, which the client may retry.
public protocol HTTPTransport: Sendable {
    /// Sends the request and returns the whole answer, whatever its status.
    ///
    /// - Parameter request: The request, with the bounds the transport must enforce.
    /// - Returns: The answer: status, header fields and body.
    /// - Throws: ``AppStoreGroupsError`` for a timeout or an oversized body; anything else for a
    ///   failure below HTTP.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
