import Testing

@testable import GroupPolicyCodegen

@Suite struct SwiftNameTests {
    @Test(
        arguments: [
            ("workspace.manage-seats", "workspaceManageSeats"),
            ("workspace.view", "workspaceView"),
            ("team_templates", "teamTemplates"),
            ("family space", "familySpace"),
            ("a..b--c__d", "aBCD"),
            ("-leading.and.trailing-", "leadingAndTrailing"),
            ("SSO.configure", "ssoConfigure"),
            ("URLSession.open", "urlSessionOpen"),
            ("Admin", "admin"),
            ("iOS.widgets", "iOSWidgets"),
            ("v2.feature", "v2Feature"),
            ("feature.2fa", "feature2fa"),
            ("team.API-keys", "teamAPIKeys"),
            ("default", "default"),
            ("Type", "type"),
        ]
    )
    func lowerCamelCase(name: String, identifier: String) throws {
        #expect(try SwiftName.identifier(for: name) == identifier)
    }

    @Test func keywordsAreDeclaredInBackticks() {
        #expect(SwiftName.declared("default") == "`default`")
        #expect(SwiftName.declared("class") == "`class`")
        #expect(SwiftName.declared("open") == "`open`")
        #expect(SwiftName.declared("defaultView") == "defaultView")
        // Keywords reserved only in particular contexts need no backticks as member names.
        #expect(SwiftName.declared("get") == "get")
    }

    @Test(
        arguments: [
            ("équipe", SwiftName.Problem.invalidCharacter("é")),
            ("team/space", .invalidCharacter("/")),
            ("--", .empty),
            ("", .empty),
            ("1-team", .startsWithDigit),
            ("init", .reserved("init")),
            ("self", .reserved("self")),
            ("Self", .reserved("self")),
        ]
    )
    func namesThatCannotBeConstants(name: String, problem: SwiftName.Problem) {
        #expect(throws: problem) { try SwiftName.identifier(for: name) }
    }
}
