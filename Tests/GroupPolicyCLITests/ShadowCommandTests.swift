import Foundation
import Testing

/// `group-policy shadow`: the table people read, what it leaves out and says so, `--json` passed
/// through validated, and every bad input one `Error:` line with exit status 2.
@Suite struct ShadowCommandTests {
    static let fixture = "Tests/GroupPolicyCLITests/Fixtures/shadow/report.json"

    static let legend =
        "3 kinds of change; gained/lost: under the candidate; rules: those that granted or denied the capability "
        + "in the group, '-' none"

    @Test func aReportIsATableBiggestChangesFirst() async throws {
        let output = try await CLIRunner.run(["shadow", Self.fixture])
        #expect(output.status == 0)
        #expect(output.stderr == "")
        #expect(
            output.stdout == """
                candidate ec499e3986364ea5 beside live 49c9b1f4e538bd3a, since 2027-01-15T08:00:00.250Z
                1200 decisions compared, 47 changed (3.9%)
                DECISIONS  GROUPS  CHANGE  CAPABILITY        GROUP TYPE    LIVE RULES         CANDIDATE RULES
                       40      41  lost    team.templates    ORGANIZATION  pro-templates      -
                        5       5  gained  workspace.view    CONSUMER      -                  consumers-view
                        2       2  lost    workspace.export  ORGANIZATION  pro-admins-manage  no-export-for-plus, no-export-in-sandbox, no-export-on-fridays +1 more
                \(Self.legend)
                long names and rule lists cut; --json has them whole

                """
        )
    }

    @Test func limitCutsRowsAndSaysWhatWasCut() async throws {
        let output = try await CLIRunner.run(["shadow", "--limit", "1", Self.fixture])
        #expect(output.status == 0)
        #expect(
            output.stdout.split(separator: "\n").suffix(3) == [
                "       40      41  lost    team.templates  ORGANIZATION  pro-templates  -",
                Substring(Self.legend),
                "2 more rows not shown (each in 5 decisions or fewer; --limit 0 shows all)",
            ]
        )
    }

    @Test func jsonPassesTheReportThroughAsRead() async throws {
        let bytes = try String(contentsOfFile: CLIRunner.packageRoot + "/" + Self.fixture, encoding: .utf8)
        let output = try await CLIRunner.run(["shadow", "--json", Self.fixture])
        #expect(output.status == 0)
        #expect(output.stdout == bytes)
        let compact =
            #"{"liveRevision":"a","candidateRevision":null,"since":"2027-01-15T08:00:00.000Z","#
            + #""decisions":0,"changedDecisions":0,"dropped":0,"changes":[]}"#
        let fromStandardInput = try await CLIRunner.run(["shadow", "--json", "-"], stdin: compact)
        #expect(fromStandardInput.stdout == compact + "\n")
    }

    @Test func aReportWithoutCandidateOrChangesSaysSo() async throws {
        let none = try await CLIRunner.run(
            ["shadow", "-"],
            stdin: #"{"liveRevision":"a1","candidateRevision":null,"since":"2027-01-15T08:00:00.000Z","#
                + #""decisions":0,"changedDecisions":0,"dropped":0,"changes":[]}"#
        )
        #expect(
            none.stdout
                == "no candidate policy loaded: nothing compared (live policy a1, since 2027-01-15T08:00:00.000Z)\n"
        )
        let same = try await CLIRunner.run(
            ["shadow", "-"],
            stdin: #"{"liveRevision":"a1","candidateRevision":"b2","since":"2027-01-15T08:00:00.000Z","#
                + #""decisions":3,"changedDecisions":0,"dropped":0,"changes":[]}"#
        )
        #expect(
            same.stdout == """
                candidate b2 beside live a1, since 2027-01-15T08:00:00.000Z
                3 decisions compared, 0 changed (0.0%)
                no changes: the candidate decided every compared decision as the live policy did

                """
        )
    }

    @Test func droppedChangesAndControlCharactersAreShownOnOneLine() async throws {
        let report =
            #"{"liveRevision":"a1","candidateRevision":"b2","since":"2027-01-15T08:00:00.000Z","#
            + #""decisions":3,"changedDecisions":2,"dropped":7,"changes":[{"capability":"x","change":"gained","#
            + #""groupType":"ORG\nANIZATION\u001b[2J","liveRules":[],"candidateRules":["r"],"groups":2,"#
            + #""decisions":2,"examples":[]}]}"#
        let output = try await CLIRunner.run(["shadow", "-"], stdin: report)
        #expect(output.status == 0)
        let droppedLine: String =
            "7 group-level changes not counted in any row: the report holds at most 10000 rows and 16 MiB, "
            + "a decision at most 1000 changes"
        #expect(
            output.stdout.split(separator: "\n").suffix(4) == [
                "DECISIONS  GROUPS  CHANGE  CAPABILITY  GROUP TYPE               LIVE RULES  CANDIDATE RULES",
                #"        2       2  gained  x           ORG\nANIZATION\u001b[2J  -           r"#,
                "1 kinds of change; gained/lost: under the candidate; rules: those that granted or denied the "
                    + "capability in the group, '-' none",
                Substring(droppedLine),
            ]
        )
    }

    @Test func rulesTheServiceLeftOutAreCountedInTheirCellAndSaidOnce() async throws {
        // A service lists 16 rules a side at most and counts the rest: 16 listed and 984 more
        // read "+997 more" after the three shown, and a row listing 1 of 3 reads "+2 more".
        let listed = (1...16).map { String(format: "\"r%02d\"", $0) }.joined(separator: ",")
        let report =
            #"{"liveRevision":"a1","candidateRevision":"b2","since":"2027-01-15T08:00:00.000Z","#
            + #""decisions":30,"changedDecisions":4,"dropped":0,"changes":["#
            + #"{"capability":"x","change":"lost","groupType":"ORGANIZATION","liveRules":["# + listed
            + #"],"liveRulesOmitted":984,"candidateRules":[],"groups":3,"decisions":3,"examples":[]},"#
            + #"{"capability":"y","change":"gained","groupType":"T","liveRules":[],"candidateRules":["a"],"#
            + #""candidateRulesOmitted":2,"groups":1,"decisions":1,"examples":[]}]}"#
        let output = try await CLIRunner.run(["shadow", "-"], stdin: report)
        #expect(output.status == 0)
        #expect(output.stderr == "")
        #expect(
            output.stdout == """
                candidate b2 beside live a1, since 2027-01-15T08:00:00.000Z
                30 decisions compared, 4 changed (13.3%)
                DECISIONS  GROUPS  CHANGE  CAPABILITY  GROUP TYPE    LIVE RULES               CANDIDATE RULES
                        3       3  lost    x           ORGANIZATION  r01, r02, r03 +997 more  -
                        1       1  gained  y           T             -                        a +2 more
                2 kinds of change; gained/lost: under the candidate; rules: those that granted or denied the capability in the group, '-' none
                long names and rule lists cut; --json has them whole
                986 rules behind the rows shown are not in the report: a service lists at most 16 a side and counts the rest (+N more)

                """
        )
        // Only the rows shown count: with the first row alone, its 984.
        let first = try await CLIRunner.run(["shadow", "--limit", "1", "-"], stdin: report)
        #expect(
            first.stdout.split(separator: "\n").last.map(String.init)
                == "984 rules behind the rows shown are not in the report: a service lists at most 16 a side and "
                + "counts the rest (+N more)"
        )
    }

    @Test func decisionsServedButNotComparedAreSaidUnderTheCounts() async throws {
        let report =
            #"{"liveRevision":"a1","candidateRevision":"b2","since":"2027-01-15T08:00:00.000Z","#
            + #""decisions":3,"changedDecisions":0,"dropped":0,"skippedDecisions":12,"changes":[]}"#
        let output = try await CLIRunner.run(["shadow", "-"], stdin: report)
        #expect(output.status == 0)
        #expect(
            output.stdout == """
                candidate b2 beside live a1, since 2027-01-15T08:00:00.000Z
                3 decisions compared, 0 changed (0.0%)
                12 decisions served were not compared: the comparisons waiting were at their limit (skippedDecisions)
                no changes: the candidate decided every compared decision as the live policy did

                """
        )
    }

    @Test(arguments: [
        (
            #"{"liveRevision":"a","candidateRevision":"b","since":"2027-01-15T08:00:00.000Z","decisions":"3","#
                + #""changedDecisions":0,"dropped":0,"changes":[]}"#,
            "Error: invalid shadow report: <stdin>:1:92: decisions: expected a whole number of at least 0 and at "
                + "most 18 digits, found a string\n"
        ),
        (
            #"{"liveRevision":"a","candidateRevision":"b","since":"2027-01-15T08:00:00.000Z","decisions":3,"#
                + #""changedDecisions":0,"dropped":0,"changes":[],"chnages":[]}"#,
            "Error: invalid shadow report: <stdin>:1:140: chnages: unknown key 'chnages' (did you mean 'changes'?); "
                + "allowed: liveRevision, candidateRevision, since, decisions, changedDecisions, dropped, skippedDecisions, changes\n"
        ),
        (
            "not json",
            "Error: invalid shadow report: <stdin>:1:1: $: invalid JSON: invalid literal (expected true, false or null)\n"
        ),
    ])
    func invalidReportsExitTwo(_ input: String, _ expected: String) async throws {
        let output = try await CLIRunner.run(["shadow", "-"], stdin: input)
        #expect(output.status == 2)
        #expect(output.stdout == "")
        #expect(output.stderr == expected)
        let json = try await CLIRunner.run(["shadow", "--json", "-"], stdin: input)
        #expect(json.status == 2)
        #expect(json.stdout == "")
        #expect(json.stderr == expected)
    }

    @Test func badUsageAndUnreadableFilesExitTwo() async throws {
        let missing = try await CLIRunner.run(["shadow", "nope.json"])
        #expect(missing.status == 2)
        #expect(missing.stderr == "Error: cannot read nope.json: no such file\n")
        let limit = try await CLIRunner.run(["shadow", "--limit", "x", Self.fixture])
        #expect(limit.status == 2)
        #expect(
            limit.stderr == """
                Error: --limit needs a number of rows, 0 or more, not 'x'
                Usage: group-policy shadow <report> [options]
                  See 'group-policy shadow --help' for more information.

                """
        )
        let help = try await CLIRunner.run(["shadow", "--help"])
        #expect(help.status == 0)
        #expect(
            help.stdout.hasPrefix(
                "Show what a candidate policy would change, from a decision service's shadow report.\n"
            )
        )
        #expect(help.stdout.contains("--json") && help.stdout.contains("--limit <n>"))
    }
}
