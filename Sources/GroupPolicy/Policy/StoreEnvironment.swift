/// The App Store environment a response came from: `Production` or `Sandbox`.
///
/// It decides whether sandbox product aliases apply and whether Apple's sandbox placeholder group
/// is ignored (in `Production`).
public enum StoreEnvironment: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// Apple's production environment (`"Production"` in policy and test files).
    case production = "Production"
    /// Apple's sandbox environment (`"Sandbox"` in policy and test files).
    case sandbox = "Sandbox"

    /// The policy-file spelling: `Production` or `Sandbox`.
    public var description: String { rawValue }
}
