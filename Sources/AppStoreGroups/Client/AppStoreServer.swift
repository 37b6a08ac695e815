public import Foundation
public import GroupPolicy

/// Which App Store Server API server the client talks to: Apple's production or sandbox server, or
/// another base URL (a local test server, a forwarding proxy).
///
/// Named for Apple's "production server URL" and "sandbox server URL"; Apple's App Store Server
/// Library names its own environment enum `AppStoreEnvironment`, so the two can be used side by side.
///
/// Apple documents the groups endpoints as served only in the sandbox today.
public struct AppStoreServer: Sendable, Hashable, CustomStringConvertible {
    /// The URL every request path is appended to.
    public let baseURL: URL
    /// The engine's name for where answers come from, for an `EvaluationContext`: `production`
    /// for Apple's production host, `sandbox` for the sandbox host, as given for a custom URL.
    public let storeEnvironment: StoreEnvironment
    private let name: String

    private init(trustedBaseURL: String, storeEnvironment: StoreEnvironment, name: String) {
        // The two literals parse; were one ever mistyped, the client would refuse the empty URL
        // at configuration time rather than crash here.
        self.baseURL = URL(string: trustedBaseURL) ?? URL(filePath: "/")
        self.storeEnvironment = storeEnvironment
        self.name = name
    }

    /// Apple's production host, `https://api.storekit.apple.com`.
    public static let production = AppStoreServer(
        trustedBaseURL: "https://api.storekit.apple.com",
        storeEnvironment: .production,
        name: "production"
    )

    /// Apple's sandbox host, `https://api.storekit-sandbox.apple.com`: the only one that serves the
    /// groups endpoints today.
    public static let sandbox = AppStoreServer(
        trustedBaseURL: "https://api.storekit-sandbox.apple.com",
        storeEnvironment: .sandbox,
        name: "sandbox"
    )

    /// Another base URL: a local test server or a proxy that forwards to Apple.
    ///
    /// The client accepts `https` URLs, and `http` only to a loopback host (`127.0.0.1`, `::1`,
    /// `localhost`), so a token never crosses a network in the clear.
    ///
    /// - Parameters:
    ///   - baseURL: The URL request paths are appended to; it may end in a path prefix.
    ///   - storeEnvironment: The environment the server's answers stand for. Default `sandbox`.
    /// - Returns: The environment.
    public static func custom(baseURL: URL, storeEnvironment: StoreEnvironment = .sandbox) -> AppStoreServer {
        AppStoreServer(baseURL: baseURL, storeEnvironment: storeEnvironment)
    }

    private init(baseURL: URL, storeEnvironment: StoreEnvironment) {
        self.baseURL = baseURL
        self.storeEnvironment = storeEnvironment
        self.name = "custom"
    }

    /// `production`, `sandbox` or `custom(<url>)`.
    public var description: String {
        name == "custom" ? "custom(\(baseURL.absoluteString))" : name
    }

    /// The base URL as text without a trailing slash, after checking it is safe to send tokens to.
    func checkedBaseURL() throws(AppStoreGroupsError) -> String {
        func invalid(_ why: String) -> AppStoreGroupsError {
            AppStoreGroupsError(
                code: .invalidConfiguration,
                message: "invalid base URL \(baseURL.absoluteString): \(why)"
            )
        }
        guard let scheme = baseURL.scheme?.lowercased(), scheme == "https" || scheme == "http" else {
            throw invalid("the scheme must be https")
        }
        guard let host = baseURL.host(percentEncoded: false), !host.isEmpty else { throw invalid("it has no host") }
        guard baseURL.query(percentEncoded: true) == nil, baseURL.fragment(percentEncoded: true) == nil else {
            throw invalid("it must not have a query or fragment")
        }
        guard baseURL.user(percentEncoded: true) == nil, baseURL.password(percentEncoded: true) == nil else {
            throw invalid("it must not hold a user or password")
        }
        if scheme == "http", !["127.0.0.1", "::1", "localhost"].contains(host.lowercased()) {
            throw invalid("plain http is allowed only to a loopback host; use https")
        }
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
