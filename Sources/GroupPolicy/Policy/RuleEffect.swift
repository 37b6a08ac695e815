/// Whether a rule adds or removes its capabilities.
package enum RuleEffect: String, Sendable {
    case grant
    case deny
}
