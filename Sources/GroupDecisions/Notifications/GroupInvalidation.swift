/// One thing to forget after an App Store Server Notification: a customer's cached groups, or every
/// cached customer of a group.
///
/// ``AppStoreNotificationFields/invalidations()`` returns them; make each with
/// ``GroupDecisionService/invalidate(anyTransactionID:)`` or
/// ``GroupDecisionService/invalidate(groupID:)`` (see the article "Serving decisions at fleet
/// scale", section "Which notifications invalidate what").
public enum GroupInvalidation: Sendable, Hashable {
    /// Forget the groups cached under this transaction id.
    case customer(anyTransactionID: String)
    /// Forget every cached customer whose answer holds this group.
    case group(groupID: String)
}
