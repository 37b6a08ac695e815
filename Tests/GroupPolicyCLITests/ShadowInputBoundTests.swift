import Foundation
import GroupPolicyTestSupport
import ServingTestSupport
import Testing

/// `group-policy shadow` answers or refuses every input up to its 64 MiB limit in bounded memory:
/// the binary, run under GNU time, peaks below 1 GB on reports near the limit, valid or not. (Its
/// time is measured by hand on a release build; see the AppStoreGroups article "Rolling out a
/// policy change".)
@Suite(
    .serialized,
    .heavy,
    .enabled(if: BoundedInputTests.canMeasureMemory, "needs GNU time to measure memory: apt-get install time"),
    .cpuBound
)
struct ShadowInputBoundTests {
    /// 1 GB, in the KiB GNU time reports.
    static let memoryBoundKiB = 1_000_000_000 / 1024

    /// Runs `group-policy shadow -` (and `arguments`) with `input` as its standard input, measured.
    static func shadow(_ input: [UInt8], _ arguments: [String] = []) async throws -> BoundedInputTests.Measured {
        let directory = try BoundedInputTests.makeScratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/report.json"
        try Data(input).write(to: URL(fileURLWithPath: path))
        // The wait for the child runs on a thread of its own, not one of the cooperative pool's.
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result { try BoundedInputTests.runMeasured(["shadow", "-"] + arguments, stdinPath: path) }
                )
            }
            .start()
        }
    }

    @Test func aValidReportListing3Point35MillionLongRuleIDsIsAnswered() async throws {
        // Before, 1.1 GB: the tree of the document, then the report.
        let input = LargeShadowReport.report(rows: 1, idsPerRow: 3_350_000, idLength: 16, allLive: true)
        #expect(input.count == 63_650_390)
        let run = try await Self.shadow(input)
        #expect(run.status == 0)
        #expect(run.stderr == "")
        #expect(
            run.stdout == """
                candidate ec499e3986364ea5 beside live 49c9b1f4e538bd3a, since 2027-01-15T08:00:00.250Z
                100000 decisions compared, 90000 changed (90.0%)
                DECISIONS  GROUPS  CHANGE  CAPABILITY  GROUP TYPE    LIVE RULES                                                          CANDIDATE RULES
                        1       2  lost    c00000      ORGANIZATION  0000000000000000, 0000000000000001, 0000000000000002 +3349997 more  -
                1 kinds of change; gained/lost: under the candidate; rules: those that granted or denied the capability in the group, '-' none
                long names and rule lists cut; --json has them whole

                """
        )
        #expect(run.peakResidentKiB < Self.memoryBoundKiB, "peak resident \(run.peakResidentKiB) KiB")
    }

    @Test func aValidReportOf3Point5MillionShortRuleIDsIsAnswered() async throws {
        let input = LargeShadowReport.report(rows: 10_000, idsPerRow: 350)
        let run = try await Self.shadow(input, ["--limit", "1"])
        #expect(run.status == 0)
        #expect(run.stderr == "")
        #expect(
            run.stdout.split(separator: "\n").suffix(3) == [
                "10000 kinds of change; gained/lost: under the candidate; rules: those that granted or denied the "
                    + "capability in the group, '-' none",
                "9999 more rows not shown (each in 1 decisions or fewer; --limit 0 shows all)",
                "long names and rule lists cut; --json has them whole",
            ]
        )
        #expect(run.peakResidentKiB < Self.memoryBoundKiB, "peak resident \(run.peakResidentKiB) KiB")
    }

    @Test func sixtyThreeMiBOfNestedArraysAreRefused() async throws {
        // Before, 1.4 GB: a node for each of the 33 million arrays.
        var input = Array(#"{"liveRevision":"a","extra":["#.utf8)
        let nested = String(repeating: "[", count: 30) + String(repeating: "]", count: 30) + ","
        for _ in 0..<1_082_000 { input.append(contentsOf: nested.utf8) }
        input.append(contentsOf: "[]]}".utf8)
        #expect(input.count == 66_002_033)
        let run = try await Self.shadow(input)
        #expect(run.status == 2)
        #expect(run.stdout == "")
        #expect(
            run.stderr
                == "Error: invalid shadow report: <stdin>:1:1: candidateRevision: missing required key "
                + "'candidateRevision'\n"
        )
        #expect(run.peakResidentKiB < Self.memoryBoundKiB, "peak resident \(run.peakResidentKiB) KiB")
    }

    @Test func aDuplicateRowAtTheEndOf62MiBIsRefused() async throws {
        let input = LargeShadowReport.report(rows: 10_000, idsPerRow: 350, lastRowRepeatsFirst: true)
        let column = LargeShadowReport.offset(ofRow: 9_999, idsPerRow: 350) + 1
        let run = try await Self.shadow(input)
        #expect(run.status == 2)
        #expect(
            run.stderr
                == "Error: invalid shadow report: <stdin>:1:\(column): changes[9999]: the same change as changes[0] "
                + "(capability, change, groupType and rules)\n"
        )
        #expect(run.peakResidentKiB < Self.memoryBoundKiB, "peak resident \(run.peakResidentKiB) KiB")
    }
}
