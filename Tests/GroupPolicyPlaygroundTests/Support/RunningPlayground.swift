import Foundation
import ServingTestSupport

@testable import GroupPolicyPlayground

/// A playground served in the test process, on a scratch copy of `Policies/` and `Examples/` and a
/// free loopback port, stopped when the test is done with it; its parts (the gate, the page
/// flights) are there for the test to hold.
final class RunningPlayground: @unchecked Sendable {
    /// The scratch folder holding `Policies/` and `Examples/`.
    let root: String
    let playground: Playground

    /// The repository's root, from this file's path.
    static let packageRoot = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    var port: Int { playground.port }
    var policies: String { root + "/Policies" }
    var app: PlaygroundApp { playground.app }

    /// Starts a playground on the copy's `Policies`; `configure` may change its options.
    init(_ configure: (inout Playground.Options) -> Void = { _ in }) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("playground-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for folder in ["Policies", "Examples"] {
            try FileManager.default.copyItem(atPath: Self.packageRoot + "/" + folder, toPath: root + "/" + folder)
        }
        var options = Playground.Options(directory: root + "/Policies", port: 0)
        configure(&options)
        playground = try Playground(options)
        let playground = self.playground
        Thread { playground.run() }.start()
    }

    deinit {
        playground.stop()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// A `POST` of a JSON object from the page's origin.
    func post(_ path: String, _ body: [String: Any]) async throws -> RawHTTP.Answer {
        let bytes = RawHTTP.request(
            method: "POST",
            path: path,
            headers: [
                "Host": "127.0.0.1:\(port)", "Origin": "http://127.0.0.1:\(port)", "Content-Type": "application/json",
            ],
            body: [UInt8](try JSONSerialization.data(withJSONObject: body))
        )
        return try await offCooperativePool { [port] in try RawHTTP.exchange(port: port, bytes) }
    }
}
