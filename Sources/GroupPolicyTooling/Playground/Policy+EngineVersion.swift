import GroupPolicy

extension Policy {
    /// The version of the engine that compiles and evaluates policies: the package's version, with
    /// `-dev` between releases.
    ///
    /// The playground names it on its page and in its share links, so an author can tell whether
    /// the page evaluates as the app's servers do (the package version they link).
    package static let engineVersion = "0.2.0-dev"

    /// The most grants and denials the tools show for one decision: 1,000,000 (about 150 MB of
    /// JSON).
    ///
    /// A policy and a response within their own limits can yield tens of millions (each group times
    /// each rule naming its products), gigabytes of output; `eval --explain` and the playground's
    /// decision refuse at once past this.
    package static let maximumShownProvenanceEntries = 1_000_000
}
