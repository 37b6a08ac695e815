/// Checks on the decision ids the service and the decision server write.
package enum DecisionIDs {
    /// Whether `id` is 8-4-4-4-12 lowercase hex with version 7 and the RFC 9562 variant.
    package static func isVersion7(_ id: String) -> Bool {
        id.wholeMatch(of: /[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/) != nil
    }
}
