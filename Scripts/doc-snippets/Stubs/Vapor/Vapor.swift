// swift-format-ignore-file
// A stub of Vapor 4 for Scripts/check-doc-snippets: only what the DocC snippets use, with Vapor's
// signatures. Nothing here runs.
public import Foundation
public import Logging
@_exported public import NIOCore

public enum HTTPResponseStatus: Sendable {
    case ok, badRequest, badGateway
}

public struct HTTPMediaType: Sendable {
    public static let json = HTTPMediaType()
}

public struct HTTPHeaders: Sendable {
    public init() {}
    public var contentType: HTTPMediaType?
}

public struct Abort: Error {
    public init(_ status: HTTPResponseStatus, reason: String? = nil) {}
}

public final class Response: Sendable {
    public struct Body: Sendable {
        public init(data: Data) {}
    }
    public init(status: HTTPResponseStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: Body) {}
}

public struct URLQueryContainer: Sendable {
    public func get<D: Decodable>(_ type: D.Type, at path: String) throws -> D { fatalError("a stub") }
}

public final class Request: Sendable {
    public let logger = Logger(label: "request")
    public var query: URLQueryContainer { URLQueryContainer() }
}

public final class Application: Sendable {
    public func get(
        _ path: String,
        use closure: @escaping @Sendable (Request) async throws -> Response
    ) {}
}
