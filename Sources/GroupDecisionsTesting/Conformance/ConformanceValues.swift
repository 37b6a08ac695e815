import Foundation
import GroupDecisions
import GroupPolicy

/// The answers, ids and descriptions the checks share.
enum ConformanceValues {
    /// `date` in whole milliseconds since 1970: the resolution stores keep.
    static func wholeMilliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// An answer holding `groups`, fetched at `milliseconds` since 1970 (as a store reads it back).
    static func answer(holding groups: [String], fetchedAt milliseconds: Int64) -> CachedGroupsAnswer {
        let entries = groups.map { #"{"groupId":"\#($0)","groupType":"CONSUMER"}"# }
        return CachedGroupsAnswer(
            kind: .groups,
            body: Array(#"{"groups":[\#(entries.joined(separator: ","))]}"#.utf8),
            fetchedAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        )
    }

    /// Apple's not-found answer, fetched at `milliseconds` since 1970.
    static func notFound(fetchedAt milliseconds: Int64) -> CachedGroupsAnswer {
        CachedGroupsAnswer(
            kind: .notFound,
            body: [],
            fetchedAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        )
    }

    /// The group ids an answer's body holds, or `nil` when it does not decode.
    static func groups(of answer: CachedGroupsAnswer) -> [String]? {
        guard answer.kind == .groups else { return [] }
        return (try? GetCustomerGroupsResponse(jsonBytes: answer.body))?.groups.map(\.groupID)
    }

    /// An id in quotes, every scalar outside printable ASCII written `\u{…}`, so that ids that
    /// differ only in normalisation read differently.
    static func quoted(_ id: String) -> String {
        var text = "\""
        for scalar in id.unicodeScalars {
            if scalar.isASCII, scalar.value >= 0x20, scalar != "\"", scalar != "\\" {
                text.unicodeScalars.append(scalar)
            } else {
                text += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return text + "\""
    }

    /// An answer as a failure shows it: its kind, groups and fetch time.
    static func describe(_ answer: CachedGroupsAnswer?) -> String {
        guard let answer else { return "no answer" }
        let milliseconds = wholeMilliseconds(answer.fetchedAt)
        switch answer.kind {
        case .notFound: return "a not-found answer fetched at \(milliseconds) ms"
        case .groups:
            let groups =
                groups(of: answer).map { "[" + $0.map(quoted).joined(separator: ", ") + "]" } ?? "(undecodable)"
            return "an answer holding \(groups) fetched at \(milliseconds) ms"
        }
    }

    /// A lock attempt as a failure shows it.
    static func describe(_ attempt: FetchLockAttempt) -> String {
        let generation = attempt.generation.map(describe) ?? "no generation"
        return "\(attempt.acquired ? "taken" : "not taken"), \(describe(attempt.answer)), \(generation)"
    }

    /// A generation as a failure shows it.
    static func describe(_ generation: InvalidationGeneration) -> String {
        "generation \(generation.customer)/\(generation.all)/\(generation.groups)"
    }

    /// A token as a failure shows it, its wait in milliseconds.
    static func describe(_ token: FleetBudgetToken) -> String {
        switch token {
        case .taken(let wait): "taken, wait \(milliseconds(wait)) ms"
        case .notTaken(let wait): "not taken, next in \(milliseconds(wait)) ms"
        }
    }

    /// A duration in milliseconds, to the microsecond.
    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return ((Double(seconds) * 1000 + Double(attoseconds) / 1e15) * 1000).rounded() / 1000
    }

    /// A duration in seconds.
    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
