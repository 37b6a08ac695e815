/// Whether a capability only changes presentation, or unlocks content (then only entitlements can
/// grant it).
public enum CapabilityKind: String, Sendable, Hashable, Codable {
    /// Changes what the app presents (controls, screens, menus). The default.
    case presentation
    /// Unlocks content: only rules with non-empty `requires.entitlements` may grant it.
    case content
}
