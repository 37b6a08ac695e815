import Foundation
import GroupPolicy

/// The JSON body of the playground's `POST` requests: the author's edits and the customer to
/// evaluate, and what a route asks about.
struct PlaygroundRequest: Decodable, Sendable {
    /// Edited policy files by file name; files not named are read from disk.
    var files: [String: String]?
    /// The response JSON to evaluate.
    var response: String?
    /// What the response is called in errors (the file it came from, or `edited`).
    var responseName: String?
    /// `production` (the default) or `sandbox`, as `--environment` takes them.
    var environment: String?
    /// Entitlements the app verified, as `--entitlement` takes them.
    var entitlements: [String]?
    /// The capability to explain.
    var capability: String?
    /// The group to explain it in (all of the response's groups when absent).
    var group: String?
    /// The file to save.
    var file: String?

    /// Decodes a body; anything but a JSON object of these keys is a one-line error.
    static func decode(_ body: [UInt8]) throws(PlaygroundFailure) -> PlaygroundRequest {
        do {
            return try JSONDecoder().decode(PlaygroundRequest.self, from: Data(body))
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw PlaygroundFailure(.badRequest, "the request body's '\(key)' has the wrong type")
        } catch {
            throw PlaygroundFailure(.badRequest, "the request body is not a JSON object of the playground's keys")
        }
    }

    /// The edits as bytes, by file name.
    var edits: [String: [UInt8]] {
        (files ?? [:]).mapValues { Array($0.utf8) }
    }
}

/// A request the playground answers with an error status and one line.
struct PlaygroundFailure: Error {
    var status: HTTPStatus
    var message: String

    init(_ status: HTTPStatus, _ message: String) {
        self.status = status
        self.message = message
    }
}
