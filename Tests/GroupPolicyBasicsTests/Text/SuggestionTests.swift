import Testing

@testable import GroupPolicyBasics

@Suite struct SuggestionTests {
    @Test(
        arguments: [
            ("workspace.mange", "workspace.manage"),
            ("workspace.veiw", "workspace.view"),
            ("efect", "effect"),
            ("y", nil),
            ("billing", nil),
            ("ab", "ac"),
        ] as [(String, String?)]
    )
    func suggestsOnlyPlausibleTypos(_ word: String, _ expected: String?) {
        let candidates = ["workspace.manage", "workspace.view", "effect", "x", "ac"]
        #expect(Suggestion.closest(to: word, among: candidates) == expected)
    }
}
