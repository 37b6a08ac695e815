public import Foundation
import GroupPolicyBasics

/// What a decision log receives for one decision served, or refused.
///
/// It never holds the customer's id or any token: ``customerHash`` is a salted SHA-256 of the id,
/// so records of one customer can be joined without revealing who they are.
public struct DecisionLogRecord: Sendable, Hashable {
    /// When the decision was made.
    public var time: Date
    /// The served decision's id (`ServedDecision.decisionID`), the key a support ticket quoting it
    /// is matched by; `nil` when the call failed closed, since no decision was served.
    public var decisionID: String?
    /// Lower-case hex SHA-256 of the log's salt followed by the customer id's UTF-8 bytes.
    public var customerHash: String
    /// The environment the decision was asked for, as Apple spells it: `Sandbox` or `Production`.
    public var environment: String
    /// The revision of the policy set that decided, when known.
    public var policyRevision: String?
    /// Where the groups came from (`live`, `cache`, `stale`); `nil` when the call failed closed.
    public var source: String?
    /// When Apple's answer was received; `nil` when the call failed closed.
    public var fetchedAt: Date?
    /// The capabilities granted, sorted; empty when the call failed closed.
    public var capabilities: [String]
    /// The error's code (such as `rate-limit-exceeded`) when the call failed closed.
    public var errorCode: String?
    /// Why a stale answer was served (`budget` or `error`); `nil` for any other.
    public var staleReason: String?
    /// How old a stale answer was when served; `nil` for any other.
    public var age: Duration?

    /// Creates a record.
    public init(
        time: Date,
        decisionID: String? = nil,
        customerHash: String,
        environment: String,
        policyRevision: String? = nil,
        source: String? = nil,
        fetchedAt: Date? = nil,
        capabilities: [String] = [],
        errorCode: String? = nil,
        staleReason: String? = nil,
        age: Duration? = nil
    ) {
        self.time = time
        self.decisionID = decisionID
        self.customerHash = customerHash
        self.environment = environment
        self.policyRevision = policyRevision
        self.source = source
        self.fetchedAt = fetchedAt
        self.capabilities = capabilities
        self.errorCode = errorCode
        self.staleReason = staleReason
        self.age = age
    }

    /// The record as one line of JSON, without the newline; keys in a fixed order, absent when
    /// `nil`.
    ///
    /// `{"time":"2026-11-30T19:00:00.123Z","decisionId":"<uuid>","customer":"<hex>",
    /// "environment":"Sandbox","policyRevision":"<hex>","source":"cache","fetchedAt":"…",
    /// "capabilities":["…"]}`, with `"error":"<code>"` in place of `source` and `fetchedAt`, and no
    /// `decisionId`, for a failure. A stale answer's line has `"staleReason":"budget"` (or
    /// `"error"`) and `"ageMilliseconds":<whole number>` after `fetchedAt`.
    public var jsonLine: String {
        var fields = ["\"time\":\"\(Self.timestamp(time))\""]
        if let decisionID { fields.append("\"decisionId\":\(JSONWriter.quoted(decisionID))") }
        fields += [
            "\"customer\":\(JSONWriter.quoted(customerHash))",
            "\"environment\":\(JSONWriter.quoted(environment))",
        ]
        if let policyRevision { fields.append("\"policyRevision\":\(JSONWriter.quoted(policyRevision))") }
        if let source { fields.append("\"source\":\(JSONWriter.quoted(source))") }
        if let fetchedAt { fields.append("\"fetchedAt\":\"\(Self.timestamp(fetchedAt))\"") }
        if let staleReason { fields.append("\"staleReason\":\(JSONWriter.quoted(staleReason))") }
        if let age { fields.append("\"ageMilliseconds\":\(age.wholeMilliseconds)") }
        fields.append("\"capabilities\":[" + capabilities.map(JSONWriter.quoted).joined(separator: ",") + "]")
        if let errorCode { fields.append("\"error\":\(JSONWriter.quoted(errorCode))") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// RFC 3339 in UTC with milliseconds, such as `2026-11-30T19:00:00.123Z`.
    static func timestamp(_ date: Date) -> String {
        Timestamp.rfc3339(date)
    }
}

extension Duration {
    /// This duration in whole milliseconds, never negative: an age as a served decision and its
    /// record write it.
    var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return max(0, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}
