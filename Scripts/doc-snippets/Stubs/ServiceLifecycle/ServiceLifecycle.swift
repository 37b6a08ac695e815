// swift-format-ignore-file
// A stub of swift-service-lifecycle for Scripts/check-doc-snippets: only what the DocC snippets
// use, with its signatures. Nothing here runs.
public import Logging

/// swift-service-lifecycle's service.
public protocol Service: Sendable {
    func run() async throws
}

/// swift-service-lifecycle's group of services.
public actor ServiceGroup {
    public init(services: [any Service], logger: Logger) {}
    public func run() async throws {}
}
