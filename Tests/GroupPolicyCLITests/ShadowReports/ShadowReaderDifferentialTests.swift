import GroupDecisions
import GroupPolicyTestSupport
import ServingTestSupport
import Testing

@testable import ShadowReportReading
@testable import group_policy

/// The streaming reader answers every input as reading it through a JSON tree did: the same report,
/// or the same one-line refusal, on thousands of seeded mutations of a valid report (bytes dropped,
/// inserted, replaced or moved, and whole values swapped for others of the format).
@Suite("Shadow: the streaming reader answers as the tree reader did")
struct ShadowReaderDifferentialTests {
    /// Values of the format and near it, to put in place of another value.
    static let values = [
        #""gained""#, #""lost""#, #""2027-01-15T08:00:00.250Z""#, "[]", #"["a","b"]"#, #"["b","a"]"#, #"["a","a"]"#,
        "{}", #"{"decisionId":null,"customerHash":null,"groupId":"g"}"#, "0", "1", "-1", "1.5", "100000", "1201",
        "99999999999999999999", "null", "true", #""x""#, #""liveRules""#, #""groups""#, #""decisions""#,
        #""changes""#, #""examples""#, #""capability""#, #""dropped""#, #""skippedDecisions""#,
        #""liveRulesOmitted""#, #""candidateRules""#, #""groupId""#, #""customerHash""#, "[1]", "[[]]", #""\u00e9""#,
    ]
    /// Bytes to insert or put in place of others.
    static let pieces = [
        "{", "}", "[", "]", ",", ":", "\"", "0", "-1", "null", "true", #""x""#, " ", "\n", #"\u00e9"#, "é", "{}",
        "[]", #""liveRules":[]"#, #""a":1,"#, #""capability":"c","#, "1.5",
    ]

    @Test(.cpuBound, arguments: [false, true])
    func seededMutations(pretty: Bool) {
        var report = SampleShadowReport.report
        report.changes[1].examples = [ShadowReport.Example(decisionID: "x", customerHash: nil, groupID: "g")]
        let original = report.jsonBytes(pretty: pretty)
        var generator = SeededGenerator(seed: pretty ? 2 : 1)
        var differences: [String] = []
        var refusals = 0
        for _ in 0..<2_500 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                Self.mutate(&bytes, using: &generator)
            }
            let tree = Self.outcome { () throws(TreeShadowReportReader.Refusal) in
                try TreeShadowReportReader.read(bytes, fileName: "r.json")
            }
            let streamed = Self.outcome { () throws(ShadowReportRefusal) in
                try ShadowReport(jsonBytes: bytes, fileName: "r.json")
            }
            if tree.hasPrefix("refused") { refusals += 1 }
            if tree != streamed {
                differences.append(
                    "\(String(decoding: bytes, as: UTF8.self))\n  tree: \(tree)\n  streamed: \(streamed)"
                )
            }
        }
        #expect(differences.prefix(5) == [], "\(differences.count) differences")
        // Most mutations make the input invalid, and some leave it a report: both are compared.
        #expect(refusals > 2_000 && refusals < 2_500)
    }

    static func outcome<Refusal: Error>(_ read: () throws(Refusal) -> ShadowReport) -> String {
        do {
            return "read \(try read())"
        } catch let refusal as TreeShadowReportReader.Refusal {
            return "refused: \(refusal.message) at \(refusal.jsonPath ?? "-")"
        } catch let refusal as ShadowReportRefusal {
            return "refused: \(refusal.message) at \(refusal.jsonPath ?? "-")"
        } catch {
            return "refused: \(error)"
        }
    }

    static func mutate(_ bytes: inout [UInt8], using generator: inout SeededGenerator) {
        let at = Int.random(in: 0..<bytes.count, using: &generator)
        let piece = Array(pieces[Int.random(in: 0..<pieces.count, using: &generator)].utf8)
        switch Int.random(in: 0..<8, using: &generator) {
        case 0: bytes.remove(at: at)
        case 1: bytes.insert(contentsOf: piece, at: at)
        case 2: bytes.replaceSubrange(at..<min(bytes.count, at + Int.random(in: 1...6, using: &generator)), with: piece)
        case 3:
            // A run moved elsewhere: keys reordered, members and elements displaced.
            let run = at..<min(bytes.count, at + Int.random(in: 1...40, using: &generator))
            let moved = Array(bytes[run])
            bytes.removeSubrange(run)
            bytes.insert(contentsOf: moved, at: Int.random(in: 0...bytes.count, using: &generator))
        default:
            let tokens = valueRanges(bytes)
            guard let token = tokens.randomElement(using: &generator) else { return }
            bytes.replaceSubrange(token, with: Array(values[Int.random(in: 0..<values.count, using: &generator)].utf8))
        }
    }

    /// Where strings, numbers, `null` and arrays start and end in `bytes`, roughly: enough to swap
    /// a value, or a key, for another.
    static func valueRanges(_ bytes: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var index = 0
        func isNumeric(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || byte == UInt8(ascii: "-") }
        while index < bytes.count {
            let start = index
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                while index < bytes.count && bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                index = min(bytes.count, index + 1)
                ranges.append(start..<index)
            case let byte where isNumeric(byte):
                while index < bytes.count && isNumeric(bytes[index]) { index += 1 }
                ranges.append(start..<index)
            case UInt8(ascii: "n") where index + 4 <= bytes.count:
                index += 4
                ranges.append(start..<index)
            case UInt8(ascii: "["):
                var depth = 0
                var end = index
                repeat {
                    if bytes[end] == UInt8(ascii: "[") { depth += 1 }
                    if bytes[end] == UInt8(ascii: "]") { depth -= 1 }
                    end += 1
                } while depth > 0 && end < bytes.count
                ranges.append(start..<end)
                index += 1
            default:
                index += 1
            }
        }
        return ranges
    }
}
