import Foundation
import GroupPolicy
import HTTPServing

/// The JSON body of the playground's `POST` requests.
///
/// It holds the author's edits and the customer to evaluate, and what a route asks about. Strict,
/// as the package's own formats are: a key it does not know is an error.
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
    /// The version to compare with instead of the files on disk: the pinned text of each file that
    /// differs from disk, by file name.
    var baseline: [String: String]?
    /// The version of each file the edits were made from, by file name (a save names its file's).
    var versions: [String: String]?
    /// The id the page drew when it loaded: one matrix at a time per page (see ``MatrixFlights``).
    var page: String?

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case files, response, responseName, environment, entitlements, capability, group, file, versions, baseline
        case page
    }

    /// Any key of the body, to find those it should not have.
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// A key the body should not have.
    private struct UnknownKey: Error {
        var key: String
    }

    init(from decoder: any Decoder) throws {
        let keys = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
        if let unknown = keys.sorted().first(where: { CodingKeys(rawValue: $0) == nil }) {
            throw UnknownKey(key: unknown)
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        files = try container.decodeIfPresent([String: String].self, forKey: .files)
        response = try container.decodeIfPresent(String.self, forKey: .response)
        responseName = try container.decodeIfPresent(String.self, forKey: .responseName)
        environment = try container.decodeIfPresent(String.self, forKey: .environment)
        entitlements = try container.decodeIfPresent([String].self, forKey: .entitlements)
        capability = try container.decodeIfPresent(String.self, forKey: .capability)
        group = try container.decodeIfPresent(String.self, forKey: .group)
        file = try container.decodeIfPresent(String.self, forKey: .file)
        versions = try container.decodeIfPresent([String: String].self, forKey: .versions)
        baseline = try container.decodeIfPresent([String: String].self, forKey: .baseline)
        page = try container.decodeIfPresent(String.self, forKey: .page)
    }

    /// Decodes a body; anything but a JSON object of these keys is a one-line error.
    static func decode(_ body: [UInt8]) throws(PlaygroundFailure) -> PlaygroundRequest {
        do {
            return try JSONDecoder().decode(PlaygroundRequest.self, from: Data(body))
        } catch let error as UnknownKey {
            let known = CodingKeys.allCases.map(\.rawValue).joined(separator: ", ")
            throw PlaygroundFailure(.badRequest, "the request body has an unknown key '\(error.key)' (known: \(known))")
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context) {
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            guard !key.isEmpty else { throw PlaygroundFailure(.badRequest, "the request body is not a JSON object") }
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
