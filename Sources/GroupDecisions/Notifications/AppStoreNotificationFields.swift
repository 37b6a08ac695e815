public import AppStoreGroups

/// The fields of an App Store Server Notification (version 2) that decide which cached groups to
/// forget, and the mapping from them to ``GroupInvalidation``s.
///
/// Verify and decode the signed notification with Apple's App Store Server Library first: this
/// type trusts nothing it has not been given and checks no signature. Fill it from the decoded
/// payload (`notificationType`, `subtype`) and its decoded transaction (`transactionId`,
/// `originalTransactionId`, `appTransactionId`), then call ``invalidations()``:
///
/// ```swift
/// let fields = AppStoreNotificationFields(
///     notificationType: payload.notificationType.rawValue,
///     subtype: payload.subtype?.rawValue,
///     transactionID: transaction.transactionId,
///     originalTransactionID: transaction.originalTransactionId,
///     appTransactionID: transaction.appTransactionId,
///     groupID: groupIDs[transaction.originalTransactionId]   // your record, when you have one
/// )
/// for invalidation in try fields.invalidations() {
///     switch invalidation {
///     case .customer(let id): try await service.invalidate(anyTransactionID: id)
///     case .group(let id): try await service.invalidate(groupID: id)
///     }
/// }
/// ```
///
/// Apple's notification carries no group id: pass ``groupID`` when your server knows it, so that
/// every member's answer is forgotten and not only the purchaser's. What each notification
/// invalidates, and why, is in the article "Serving decisions at fleet scale", section "Which
/// notifications invalidate what".
public struct AppStoreNotificationFields: Sendable, Hashable {
    /// The payload's `notificationType`, as Apple spells it (`REFUND`, `EXPIRED`, …).
    public var notificationType: String
    /// The payload's `subtype` (`SEATS`, `VOLUNTARY`, …), or `nil` when the notification has none.
    public var subtype: String?
    /// The decoded transaction's `transactionId`, when the notification carries a transaction.
    public var transactionID: String?
    /// The decoded transaction's `originalTransactionId`.
    public var originalTransactionID: String?
    /// The decoded transaction's `appTransactionId`.
    public var appTransactionID: String?
    /// The group the purchase made, when your server knows it (Apple's payload does not say).
    public var groupID: String?

    /// Creates the fields.
    public init(
        notificationType: String,
        subtype: String? = nil,
        transactionID: String? = nil,
        originalTransactionID: String? = nil,
        appTransactionID: String? = nil,
        groupID: String? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.appTransactionID = appTransactionID
        self.groupID = groupID
    }

    /// What a notification calls for.
    enum Reach: Equatable {
        /// Nothing a cached answer holds changed.
        case nothing
        /// The customer's answer and, when the group is known, every member's.
        case customerAndGroup
        /// The customer's answer alone: a notification this library does not know.
        case customerOnly
    }

    /// Types that never change a customer's groups: informational, about renewal settings that
    /// take effect later (and arrive again as `DID_RENEW` or `EXPIRED`), or not about subscriptions.
    static let informational: Set<String> = [
        "CONSUMPTION_REQUEST", "DID_CHANGE_RENEWAL_STATUS", "EXTERNAL_PURCHASE_TOKEN", "ONE_TIME_CHARGE",
        "PRICE_INCREASE", "REFUND_DECLINED", "RENEWAL_EXTENDED", "RENEWAL_EXTENSION", "TEST",
    ]

    /// Types after which a customer's access, and a group purchaser's group, may have changed.
    static let accessChanging: Set<String> = [
        "EXPIRED", "GRACE_PERIOD_EXPIRED", "OFFER_REDEEMED", "REFUND", "REFUND_REVERSED", "REVOKE",
        "SUBSCRIBED", "DID_RENEW", "UNCLAIM_SEATS",
    ]

    /// Subtypes that change a group's seats, whatever type carries them.
    static let seatSubtypes: Set<String> = ["INCREASE_QUANTITY", "DECREASE_QUANTITY", "SEATS"]

    /// What this notification calls for, by the table of the fleet article.
    var reach: Reach {
        if let subtype, Self.seatSubtypes.contains(subtype) { return .customerAndGroup }
        if Self.accessChanging.contains(notificationType) { return .customerAndGroup }
        if Self.informational.contains(notificationType) { return .nothing }
        // An upgrade takes effect at once, a downgrade (or undoing one) at the next renewal; access
        // goes on through a grace period, which GRACE_PERIOD_EXPIRED ends. A type or subtype Apple
        // added after this table: forgetting never grants anything and costs one fetch, so the
        // customer is forgotten, but not a whole group.
        switch (notificationType, subtype) {
        case ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"), ("DID_FAIL_TO_RENEW", nil): return .customerAndGroup
        case ("DID_CHANGE_RENEWAL_PREF", nil), ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"): return .nothing
        case ("DID_FAIL_TO_RENEW", "GRACE_PERIOD"): return .nothing
        default: return .customerOnly
        }
    }

    /// The invalidations this notification calls for: the group first (when known and called
    /// for), then each distinct transaction id present, in the order `transactionID`,
    /// `originalTransactionID`, `appTransactionID`.
    ///
    /// A notification that changes nothing cached gives an empty list. Every id present is checked
    /// as the service checks ids (a transaction id: 1 to 128 characters of `A-Z a-z 0-9 _ -`; a
    /// group id is any string, as in Apple's answers), whether or not the notification needs it.
    ///
    /// - Returns: The invalidations to make, in order.
    /// - Throws: `AppStoreGroupsError.Code.invalidArgument` for an empty or malformed
    ///   `notificationType` or `subtype` (1 to 64 characters of `A-Z 0-9 _`), a malformed id, or a
    ///   notification known to change access that names no transaction id and no group (an
    ///   unknown one naming nobody gives an empty list).
    public func invalidations() throws(AppStoreGroupsError) -> [GroupInvalidation] {
        try Self.checkName(notificationType, name: "notificationType")
        if let subtype { try Self.checkName(subtype, name: "subtype") }
        var customers: [String] = []
        for (value, name) in [
            (transactionID, "transactionId"), (originalTransactionID, "originalTransactionId"),
            (appTransactionID, "appTransactionId"),
        ] {
            guard let value else { continue }
            try RequestValidation.checkIdentifier(value, name: name)
            if !customers.contains(value) { customers.append(value) }
        }
        // A group id is any string, as in Apple's answers and in invalidate(groupID:): not checked.

        let customerInvalidations = customers.map { GroupInvalidation.customer(anyTransactionID: $0) }
        switch reach {
        case .nothing: return []
        case .customerOnly: return customerInvalidations
        case .customerAndGroup: break
        }
        let result = (groupID.map { [GroupInvalidation.group(groupID: $0)] } ?? []) + customerInvalidations
        guard !result.isEmpty else {
            throw AppStoreGroupsError(
                code: .invalidArgument,
                message: "the \(notificationType) notification calls for an invalidation but names no transaction id "
                    + "and no group"
            )
        }
        return result
    }

    /// Longest accepted `notificationType` or `subtype`; Apple's longest is about 30 characters.
    static let maximumNameLength = 64

    /// Throws unless `value` is 1 to 64 characters of `A-Z 0-9 _`, as Apple spells its values.
    private static func checkName(_ value: String, name: String) throws(AppStoreGroupsError) {
        let bytes = value.utf8
        let valid =
            !bytes.isEmpty && bytes.count <= maximumNameLength
            && bytes.allSatisfy { byte in
                (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
            }
        guard valid else {
            throw AppStoreGroupsError(
                code: .invalidArgument,
                message: "the \(name) must be 1 to \(maximumNameLength) characters of A-Z 0-9 _"
            )
        }
    }
}
