public import Foundation

/// One HTTP request the client asks an ``HTTPTransport`` to send.
///
/// Besides the request itself it carries the two bounds a transport must enforce: the time the
/// whole exchange may take and the largest response body it may read.
public struct HTTPRequest: Sendable, Hashable {
    /// The method, such as `GET`.
    public var method: String
    /// The absolute URL, query included.
    public var url: URL
    /// The header fields to send, such as `Authorization`.
    public var headerFields: [String: String]
    /// How long the whole exchange may take, from sending to the last body byte.
    public var timeout: Duration
    /// The largest response body, in bytes, the transport may read; past it the transport throws
    /// an ``AppStoreGroupsError`` with code ``AppStoreGroupsError/Code/responseTooLarge``.
    public var maximumResponseBodySize: Int

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - method: The method, such as `GET`.
    ///   - url: The absolute URL, query included.
    ///   - headerFields: The header fields to send.
    ///   - timeout: How long the whole exchange may take.
    ///   - maximumResponseBodySize: The largest response body the transport may read.
    public init(
        method: String,
        url: URL,
        headerFields: [String: String] = [:],
        timeout: Duration,
        maximumResponseBodySize: Int
    ) {
        self.method = method
        self.url = url
        self.headerFields = headerFields
        self.timeout = timeout
        self.maximumResponseBodySize = maximumResponseBodySize
    }
}
