/// One thing to forget after an App Store Server Notification: a customer's cached groups, or every
/// cached customer of a group.
///
/// ``AppStoreNotificationFields/invalidations()`` returns them; make each with the service:
/// ``customer(anyTransactionID:)`` with ``GroupDecisionService/invalidate(anyTransactionID:)``, and
/// ``group(groupID:)`` with the service's invalidation by group (`invalidate(groupID:)`), which
/// forgets every cached customer whose answer holds that group, in this process and in the shared
/// store. The table of which notification invalidates what is in the article "Serving decisions at
/// fleet scale", section "Which notifications invalidate what".
public enum GroupInvalidation: Sendable, Hashable {
    /// Forget the groups cached under this transaction id.
    case customer(anyTransactionID: String)
    /// Forget every cached customer whose answer holds this group.
    case group(groupID: String)
}
