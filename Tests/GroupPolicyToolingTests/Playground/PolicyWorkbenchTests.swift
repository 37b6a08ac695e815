import GroupPolicy
import GroupPolicyTestSupport
import GroupPolicyTooling
import Testing

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A policy directory with unsaved edits answers as `check`, `eval` and `test` would if the edits
/// were saved, and the files on disk stay as they are.
@Suite struct PolicyWorkbenchTests {
    /// A scratch copy of `Policies/` and `Examples/`; returns the copy's `Policies/`.
    static func scratchPolicies() throws -> String {
        let root = try makeTemporaryDirectory("policy-workbench")
        for folder in ["Policies", "Examples"] {
            try FileManager.default.copyItem(atPath: repositoryFile(folder), toPath: root + "/" + folder)
        }
        return root + "/Policies"
    }

    static func remove(_ policies: String) {
        try? FileManager.default.removeItem(atPath: String(policies.dropLast("/Policies".count)))
    }

    /// `team-workspace.json` without `workspace.members` in the rule every seat holder meets.
    static func membersDropped(_ policies: String) throws -> [UInt8] {
        let text = try String(contentsOfFile: policies + "/team-workspace.json", encoding: .utf8)
        let edited = text.replacingOccurrences(
            of: #""capabilities": ["workspace.view", "workspace.members"]"#,
            with: #""capabilities": ["workspace.view"]"#
        )
        #expect(edited != text)
        return Array(edited.utf8)
    }

    static func descriptions(_ report: PolicyCheckReport) -> [String] {
        report.files.flatMap { file in
            (file.error.map { $0.diagnostics.map(\.description) } ?? []) + file.diagnostics.map(\.description)
        }
    }

    @Test func withoutEditsItIsTheDirectoryOnDisk() throws {
        let policies = try Self.scratchPolicies()
        defer { Self.remove(policies) }
        let workbench = try PolicyWorkbench(directory: policies)
        #expect(workbench.policyFiles == [policies + "/family-sharing.json", policies + "/team-workspace.json"])
        #expect(try workbench.policy().revision == (try Policy(contentsOfDirectory: policies).revision))
        let report = try workbench.check()
        #expect(report.summary.errors == 0)
        #expect(report.summary.invariantsHolding == 9)
        let tests = try workbench.runTests()
        #expect((tests.passed, tests.failed) == (19, 0))
    }

    /// The edit is what loading, checking and testing read; the file on disk is untouched.
    @Test func anEditIsReadInsteadOfTheFile() throws {
        let policies = try Self.scratchPolicies()
        defer { Self.remove(policies) }
        let onDisk = try Data(contentsOf: URL(fileURLWithPath: policies + "/team-workspace.json"))
        let workbench = try PolicyWorkbench(
            directory: policies,
            edits: ["team-workspace.json": try Self.membersDropped(policies)]
        )
        let decision = try workbench.policy().evaluate(
            try response(String(contentsOfFile: policies + "/../Examples/seat-holder.json", encoding: .utf8)),
            in: production
        )
        #expect(decision.capabilities.names == ["workspace.view"])
        #expect(try workbench.savedPolicy().revision == (try Policy(contentsOfDirectory: policies).revision))
        #expect(
            Self.descriptions(try workbench.check()).map { $0.replacingOccurrences(of: policies, with: "P") } == [
                "P/team-workspace.json:7:5: warning: capabilities[\"workspace.members\"]: capability "
                    + "'workspace.members' is declared but no rule grants it"
            ]
        )
        let tests = try workbench.runTests()
        #expect((tests.passed, tests.failed) == (12, 7))
        #expect(try Data(contentsOf: URL(fileURLWithPath: policies + "/team-workspace.json")) == onDisk)
    }

    /// Two files claiming one policy id conflict only as a set: `check` loads each file on its own,
    /// so the workbench adds the set's conflicts, as errors of the file they point into.
    @Test func aConflictBetweenFilesIsAnErrorOfTheFile() throws {
        let policies = try Self.scratchPolicies()
        defer { Self.remove(policies) }
        let text = try String(contentsOfFile: policies + "/family-sharing.json", encoding: .utf8)
        let edit = text.replacingOccurrences(of: #""id": "family-sharing""#, with: #""id": "team-workspace""#)
        let report = try PolicyWorkbench(directory: policies, edits: ["family-sharing.json": Array(edit.utf8)]).check()
        #expect(report.summary.errors == 1)
        #expect(
            Self.descriptions(report).map { $0.replacingOccurrences(of: policies, with: "P") } == [
                "P/team-workspace.json:3:9: error: id: policy id 'team-workspace' is also the id of P/family-sharing.json"
            ]
        )
    }

    /// An edit over the size limit is refused as a file of that size on disk is, with the same line.
    @Test(.cpuBound) func anEditOverTheSizeLimitIsRefusedAsTheFileWouldBe() throws {
        let policies = try Self.scratchPolicies()
        defer { Self.remove(policies) }
        let text = try String(contentsOfFile: policies + "/team-workspace.json", encoding: .utf8)
        let large = Array((text + String(repeating: " ", count: PolicyLimits.default.maximumBytes)).utf8)
        let edited = try PolicyWorkbench(directory: policies, edits: ["team-workspace.json": large]).check()
        try Data(large).write(to: URL(fileURLWithPath: policies + "/team-workspace.json"))
        let saved = try PolicyWorkbench(directory: policies).check()
        let line =
            "\(policies)/team-workspace.json:1:1: error: $: file of \(large.count) bytes is over the limit of "
            + "\(PolicyLimits.default.maximumBytes) bytes"
        #expect(Self.descriptions(edited).first == line)
        #expect(Self.descriptions(edited) == Self.descriptions(saved))
        #expect(edited.summary.errors == saved.summary.errors)
        #expect(throws: GroupPolicyError.self) { try PolicyWorkbench(directory: policies, edits: [:]).policy() }
    }

    @Test func anEditOfAFileOutsideThePolicySetIsRefused() throws {
        let policies = try Self.scratchPolicies()
        defer { Self.remove(policies) }
        for name in ["schema/group-policy.schema.json", "../Examples/seat-holder.json", "new.json"] {
            #expect {
                try PolicyWorkbench(directory: policies, edits: [name: []])
            } throws: { error in
                (error as? GroupPolicyError)?.message == "'\(name)' is not a policy or test file of \(policies)"
            }
        }
        #expect {
            try PolicyWorkbench(directory: policies + "/team-workspace.json")
        } throws: { error in
            (error as? GroupPolicyError)?.message == "\(policies)/team-workspace.json is not a directory"
        }
    }
}
