import Testing

@testable import GroupPolicyBasics

/// The work one document may spend on "did you mean": each suggestion costs the product of the
/// word's length and each candidate's, taken from what is left; one it cannot pay for spends the
/// rest, so every later one is refused too, the same ones on every run.
@Suite struct SuggestionBudgetTests {
    static let candidates = ["effect", "x"]

    @Test func aSuggestionCostsTheLengthProducts() {
        // "efect" against "effect" and "x": 5 × 6 + 5 × 1 = 35 cells.
        let budget = SuggestionBudget(cells: 100)
        #expect(Suggestion.closest(to: "efect", among: Self.candidates, budget: budget) == "effect")
        #expect(budget.remaining == 65)
        // The cost is paid whether or not a candidate is close enough.
        #expect(Suggestion.closest(to: "zzzzz", among: Self.candidates, budget: budget) == nil)
        #expect(budget.remaining == 30)
    }

    @Test func exactlyEnoughIsEnough() {
        let budget = SuggestionBudget(cells: 35)
        #expect(Suggestion.closest(to: "efect", among: Self.candidates, budget: budget) == "effect")
        #expect(budget.remaining == 0)
    }

    @Test func oneItCannotPayForSpendsTheRest() {
        let budget = SuggestionBudget(cells: 34)
        #expect(Suggestion.closest(to: "efect", among: Self.candidates, budget: budget) == nil)
        #expect(budget.remaining == 0)
        // A one-letter word against a one-letter name costs a cell, which is no longer there.
        #expect(Suggestion.closest(to: "y", among: ["x"], budget: budget) == nil)
        #expect(budget.remaining == 0)
    }

    /// An empty word or candidate still costs a cell, so many of them cannot run for free.
    @Test func emptyNamesCostACell() {
        let budget = SuggestionBudget(cells: 10)
        #expect(Suggestion.closest(to: "", among: ["", "ab"], budget: budget) == nil)
        #expect(budget.remaining == 7)
        #expect(Suggestion.closest(to: "abc", among: [], budget: budget) == nil)
        #expect(budget.remaining == 7)
    }

    @Test func theDefaultIsPerDocument() {
        #expect(SuggestionBudget.perDocument == 20_000_000)
        #expect(SuggestionBudget().remaining == 20_000_000)
    }

    /// Sorted once, and again only when the number of names changed (the names a document
    /// declares only grow while it loads).
    @Test func sortedCandidatesAreComputedAgainOnlyWhenTheirNumberChanges() {
        let budget = SuggestionBudget()
        #expect(budget.sortedCandidates(["b", "c", "a"]) == ["a", "b", "c"])
        #expect(budget.sortedCandidates(Set(["z", "y", "x"])) == ["a", "b", "c"])
        #expect(budget.sortedCandidates(["d", "b", "c", "a"]) == ["a", "b", "c", "d"])
    }
}

/// The Damerau-Levenshtein distance behind the suggestions, and its cap.
@Suite struct EditDistanceTests {
    @Test(
        arguments: [
            ("", "", 0),
            ("", "abc", 3),
            ("abc", "", 3),
            ("abc", "abc", 0),
            ("ab", "ba", 1),
            ("veiw", "view", 1),
            ("kitten", "sitting", 3),
            ("caf\u{E9}", "cafe\u{301}", 2),
            ("\u{1F600}x", "x\u{1F600}", 1),
        ]
    )
    func distance(lhs: String, rhs: String, distance: Int) {
        #expect(Suggestion.editDistance(Array(lhs.unicodeScalars), Array(rhs.unicodeScalars), limit: 10) == distance)
    }

    /// Once every cell of a row is over the limit the distance is reported as the limit plus one.
    @Test func stopsOnceARowIsOverTheLimit() {
        #expect(Suggestion.editDistance(Array("abcdef".unicodeScalars), Array("uvwxyz".unicodeScalars), limit: 2) == 3)
        #expect(Suggestion.editDistance(Array("abcdef".unicodeScalars), Array("uvwxyz".unicodeScalars), limit: 10) == 6)
    }

    /// Of candidates equally close, the first wins; callers pass them sorted, so the suggestion
    /// does not depend on the order names were declared in.
    @Test func theFirstOfEquallyCloseCandidatesWins() {
        #expect(Suggestion.closest(to: "ab", among: ["ac", "ad"]) == "ac")
        #expect(Suggestion.closest(to: "ab", among: ["ad", "ac"]) == "ad")
        #expect(Suggestion.closest(to: "abcd", among: ["abce", "abcd"]) == "abcd")
    }
}
