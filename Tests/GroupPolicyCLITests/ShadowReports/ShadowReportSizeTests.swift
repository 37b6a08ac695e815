import Foundation
import GroupDecisions
import GroupPolicyTestSupport
import ServingTestSupport
import Testing

@testable import ShadowReportReading
@testable import group_policy

/// Reports near the 64 MiB the reader takes: a valid one is read whole, an invalid one refused.
///
/// An invalid one is refused with its one located line, wherever the problem is and however the
/// input is shaped. (Their memory is checked on the binary: GroupPolicyCLITests,
/// ShadowInputBoundTests.)
/// One at a time: each test holds a 62 MiB input and what is read from it.
@Suite("Shadow: reading reports near the size limit", .serialized, .heavy, .cpuBound)
struct ShadowReportSizeTests {
    /// 10,000 rows of 350 rule ids each: 3.5 million ids, 62 MiB.
    static let rows = 10_000
    static let idsPerRow = 350

    static func refusal(_ bytes: [UInt8]) -> String? {
        do {
            let report = try ShadowReport(jsonBytes: bytes, fileName: "big.json")
            Issue.record("read a report of \(report.changes.count) rows")
            return nil
        } catch {
            return error.message
        }
    }

    @Test("62 MiB with 3.5 million rule ids is read whole, in the report's order")
    func validNearTheLimit() throws {
        let bytes = LargeShadowReport.report(rows: Self.rows, idsPerRow: Self.idsPerRow)
        #expect(bytes.count == 64_910_198)
        let report = try ShadowReport(jsonBytes: bytes)
        #expect(report.changes.count == 10_000)
        #expect(report.changes.reduce(0) { $0 + $1.liveRules.count + $1.candidateRules.count } == 3_500_000)
        let first = try #require(report.changes.first)
        #expect(first.capability == "c00000")
        #expect(first.liveRules.count == 175 && first.candidateRules.count == 175)
        #expect(first.liveRules.first == "r00000000000000")
        #expect(first.candidateRules.first == LargeShadowReport.ruleID(175))
        #expect(report.changes.last?.capability == "c09999")
        #expect(report.changes.last?.candidateRules.last == LargeShadowReport.ruleID(3_499_999))
        #expect(
            report.changes.last?.examples == [ShadowReport.Example(decisionID: "d", customerHash: nil, groupID: "g")]
        )
    }

    @Test("a duplicate row as the last of 10,000 is refused where it starts")
    func duplicateRowAtTheEnd() {
        let bytes = LargeShadowReport.report(rows: Self.rows, idsPerRow: Self.idsPerRow, lastRowRepeatsFirst: true)
        let column = LargeShadowReport.offset(ofRow: 9_999, idsPerRow: Self.idsPerRow) + 1
        #expect(
            Self.refusal(bytes)
                == "big.json:1:\(column): changes[9999]: the same change as changes[0] (capability, change, groupType "
                + "and rules)"
        )
    }

    @Test("a bad value after 62 MiB of rows is refused at the value")
    func badValueAtTheEnd() {
        let head = LargeShadowReport.head.replacingOccurrences(of: #""dropped":0,"#, with: "")
        let bytes = LargeShadowReport.report(
            rows: Self.rows,
            idsPerRow: Self.idsPerRow,
            head: head,
            tail: #","dropped":-1"#
        )
        #expect(
            Self.refusal(bytes)
                == "big.json:1:\(bytes.count - 2): dropped: expected a whole number of at least 0 and at most 18 "
                + "digits, found -1"
        )
    }

    @Test("a key twice after 62 MiB of rows is invalid JSON, refused at the second")
    func duplicateKeyAtTheEnd() {
        let tail = #","changes":[]"#
        let bytes = LargeShadowReport.report(rows: Self.rows, idsPerRow: Self.idsPerRow, tail: tail)
        let column = bytes.count - tail.utf8.count + 1
        #expect(Self.refusal(bytes) == "big.json:1:\(column): $: invalid JSON: duplicate key 'changes'")
    }

    /// A report whose `extra` member holds `value`, the rest valid and empty.
    static func withExtra(_ value: [UInt8]) -> [UInt8] {
        Array(#"{"extra":"#.utf8) + value
            + Array(
                (#","liveRevision":"a","candidateRevision":"b","since":"2027-01-15T08:00:00.000Z","decisions":1,"#
                    + #""changedDecisions":0,"dropped":0,"changes":[]}"#).utf8
            )
    }

    /// `count` copies of `piece` between `[` and `]`, separated by commas.
    static func array(of piece: String, count: Int) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(count * (piece.utf8.count + 1) + 2)
        for index in 0..<count {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: piece.utf8)
        }
        bytes.append(UInt8(ascii: "]"))
        return bytes
    }

    @Test("63 MiB of arrays nested 31 deep under an unknown key: refused at the key")
    func nestedGarbage() {
        let nested = String(repeating: "[", count: 30) + String(repeating: "]", count: 30)
        let bytes = Self.withExtra(Self.array(of: nested, count: 1_082_000))
        #expect(bytes.count == 66_002_149)
        #expect(
            Self.refusal(bytes)
                == "big.json:1:2: extra: unknown key 'extra'; allowed: liveRevision, candidateRevision, since, "
                + "decisions, changedDecisions, dropped, skippedDecisions, changes"
        )
    }

    @Test("63 MiB of brackets, nested past the limit: invalid JSON at the 33rd level")
    func nestedTooDeep() {
        let bytes = Self.withExtra(Array(repeating: UInt8(ascii: "["), count: 66_000_000))
        let path = "extra" + String(repeating: "[0]", count: 31)
        #expect(Self.refusal(bytes) == "big.json:1:41: \(path): invalid JSON: nesting deeper than 32 levels")
    }

    @Test("63 MiB of distinct keys, the last one repeating the first: invalid JSON at the last")
    func manyKeysOneRepeated() {
        var object: [UInt8] = [UInt8(ascii: "{")]
        let count = 5_200_000
        object.reserveCapacity(count * 12 + 20)
        for index in 0..<count {
            object.append(contentsOf: #""k"#.utf8)
            object.append(contentsOf: String(index).utf8)
            object.append(contentsOf: #"":0,"#.utf8)
        }
        let lastKey = object.count
        object.append(contentsOf: #""k0":1}"#.utf8)
        let bytes = Self.withExtra(object)
        #expect(bytes.count == 66_489_046)
        #expect(
            Self.refusal(bytes)
                == "big.json:1:\(lastKey + #"{"extra":"#.utf8.count + 1): extra: invalid JSON: duplicate key 'k0'"
        )
    }

    @Test("a rule list of a million ids, longer than a service writes, is still read")
    func longRuleList() throws {
        let bytes = LargeShadowReport.report(rows: 1, idsPerRow: 1_000_000, idLength: 16)
        let report = try ShadowReport(jsonBytes: bytes)
        #expect(report.changes.count == 1)
        #expect(report.changes[0].liveRules.count == 500_000)
        #expect(report.changes[0].candidateRules.count == 500_000)
        #expect(report.changes[0].candidateRules.last == "0000000000999999")
        #expect(report.changes[0].liveRulesOmitted == 0)
    }
}
