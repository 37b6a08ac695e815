public import AppStoreGroups
public import GroupDecisions
import GroupPolicy

/// The app's one route on GroupPolicy: which controls of the team workspace a customer sees.
///
/// Framework-free on purpose: a Vapor or Hummingbird route calls ``respond(transactionID:entitlements:)``
/// and turns the ``Response`` into its own. The capabilities are the TypedCapabilities plugin's
/// constants, generated from `Policies/team.json`: a misspelt one does not compile.
public struct WorkspaceHandler: Sendable {
    /// An answer: an HTTP status and a JSON body.
    public struct Response: Sendable, Equatable {
        /// The HTTP status.
        public var status: Int
        /// The JSON body.
        public var body: String

        /// Creates an answer.
        ///
        /// - Parameters:
        ///   - status: The HTTP status.
        ///   - body: The JSON body.
        public init(status: Int, body: String) {
            self.status = status
            self.body = body
        }
    }

    /// Where decisions come from.
    public let decisions: GroupDecisionService

    /// Creates a handler over a decision service.
    ///
    /// - Parameter decisions: The service; one per process.
    public init(decisions: GroupDecisionService) {
        self.decisions = decisions
    }

    /// `GET /workspace?transactionId=…`: the controls to show, and the policy revision that chose
    /// them; nothing granted on any failure.
    ///
    /// - Parameters:
    ///   - transactionID: Any of the customer's transaction ids.
    ///   - entitlements: The product ids the app's backend verified from the customer's transactions.
    /// - Returns: 200 with `{"controls":[…],"revision":"…"}`, or an error status with
    ///   `{"error":"…"}`.
    public func respond(transactionID: String, entitlements: Set<String> = []) async -> Response {
        let served: ServedDecision
        do {
            served = try await decisions.decision(
                anyTransactionID: transactionID,
                entitlements: entitlements,
                environment: .sandbox
            )
        } catch {
            return Self.failure(error)
        }
        var controls: [String] = []
        if served.decision.allows(.workspaceView) { controls.append(Self.jsonString("view")) }
        if served.decision.allows(.workspaceManageSeats) { controls.append(Self.jsonString("manage-seats")) }
        // The role is Apple's string, and the revision names the policy files: both are quoted
        // as JSON strings, whatever they hold.
        let role = served.decision.memberships(in: .team).first?.role.rawValue ?? "none"
        let members = [
            #""controls":["# + controls.joined(separator: ",") + "]",
            #""role":"# + Self.jsonString(role),
            #""revision":"# + Self.jsonString(served.policyRevision),
        ]
        return Response(status: 200, body: "{" + members.joined(separator: ",") + "}")
    }

    /// The answer for a failed decision: the status that says what to do, nothing granted.
    static func failure(_ error: AppStoreGroupsError) -> Response {
        let status =
            switch error.code {
            case .invalidArgument, .invalidTransactionID: 400
            case .transactionIDNotFound: 404
            case .rateLimitExceeded: 503
            case .timeout: 504
            default: 502
            }
        return Response(status: status, body: #"{"error":"# + jsonString(error.code.description) + "}")
    }

    /// `text` as a JSON string literal: quoted, with `"`, `\` and every control character
    /// escaped, as RFC 8259 requires.
    public static func jsonString(_ text: String) -> String {
        var literal = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": literal += "\\\""
            case "\\": literal += "\\\\"
            case "\n": literal += "\\n"
            case "\r": literal += "\\r"
            case "\t": literal += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                literal += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: literal.unicodeScalars.append(scalar)
            }
        }
        return literal + "\""
    }
}
