// swift-format-ignore-file
// A stub of Hummingbird 2 for Scripts/check-doc-snippets: only what the DocC snippets use, with
// Hummingbird's signatures. Nothing here runs.
public import Logging
@_exported public import NIOCore

public enum HTTPResponseStatus: Sendable {
    case ok, badRequest, badGateway
}

public struct HTTPError: Error {
    public init(_ status: HTTPResponseStatus, message: String? = nil) {}
}

public struct HTTPFields: ExpressibleByDictionaryLiteral, Sendable {
    public struct Name: Hashable, Sendable {
        public static let contentType = Name()
    }
    public init(dictionaryLiteral elements: (Name, String)...) {}
}

public struct ResponseBody: Sendable {
    public init(byteBuffer: ByteBuffer) {}
}

public struct Response: Sendable {
    public init(status: HTTPResponseStatus, headers: HTTPFields = [:], body: ResponseBody = ResponseBody(byteBuffer: ByteBuffer())) {}
}

public struct Parameters: Sendable {
    public func get(_ name: String) -> String? { nil }
}

public struct URI: Sendable {
    public var queryParameters: Parameters { Parameters() }
}

public struct Request: Sendable {
    public var uri: URI { URI() }
}

public struct BasicRequestContext: Sendable {
    public var logger: Logger { Logger(label: "context") }
}

public final class Router: Sendable {
    public init() {}
    @discardableResult
    public func get(
        _ path: String,
        use handler: @escaping @Sendable (Request, BasicRequestContext) async throws -> Response
    ) -> Self { self }
}

public struct ApplicationConfiguration: Sendable {
    public struct Address: Sendable {
        public static func hostname(_ host: String, port: Int) -> Address { Address() }
    }
    public init(address: Address) {}
}

public struct Application: Sendable {
    public init(router: Router, configuration: ApplicationConfiguration) {}
    public func runService() async throws {}
}
