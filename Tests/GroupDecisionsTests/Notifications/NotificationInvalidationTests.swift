import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The notification table of the fleet article, row by row, and the refusals of malformed fields.
@Suite("Notification invalidations")
struct NotificationInvalidationTests {
    /// What a row calls for, with every id and the group given.
    struct Expected {
        static let nothing = Expected(invalidations: [])
        static let customerOnly = Expected(invalidations: [
            .customer(anyTransactionID: "2000000111"), .customer(anyTransactionID: "2000000001"),
            .customer(anyTransactionID: "app-7"),
        ])
        static let customerAndGroup = Expected(invalidations: [.group(groupID: "group-9")] + customerOnly.invalidations)

        var invalidations: [GroupInvalidation]
    }

    /// Every row of the table (a type, a subtype or `nil`, what it invalidates), and the unknown ones.
    static let table: [(String, String?, Expected)] = [
        ("SUBSCRIBED", "INITIAL_BUY", .customerAndGroup),
        ("SUBSCRIBED", "RESUBSCRIBE", .customerAndGroup),
        ("DID_RENEW", nil, .customerAndGroup),
        ("DID_RENEW", "BILLING_RECOVERY", .customerAndGroup),
        ("OFFER_REDEEMED", "UPGRADE", .customerAndGroup),
        ("DID_CHANGE_RENEWAL_PREF", "UPGRADE", .customerAndGroup),
        ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE", .nothing),
        ("DID_CHANGE_RENEWAL_PREF", nil, .nothing),
        ("DID_CHANGE_RENEWAL_PREF", "INCREASE_QUANTITY", .customerAndGroup),
        ("DID_CHANGE_RENEWAL_PREF", "DECREASE_QUANTITY", .customerAndGroup),
        ("SUBSCRIBED", "INCREASE_QUANTITY", .customerAndGroup),
        ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", .nothing),
        ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", .nothing),
        ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", .nothing),
        ("DID_FAIL_TO_RENEW", nil, .customerAndGroup),
        ("GRACE_PERIOD_EXPIRED", nil, .customerAndGroup),
        ("EXPIRED", "VOLUNTARY", .customerAndGroup),
        ("EXPIRED", "BILLING_RETRY", .customerAndGroup),
        ("EXPIRED", "PRICE_INCREASE", .customerAndGroup),
        ("EXPIRED", "PRODUCT_NOT_FOR_SALE", .customerAndGroup),
        ("EXPIRED", nil, .customerAndGroup),
        ("REFUND", "SEATS", .customerAndGroup),
        ("REFUND", nil, .customerAndGroup),
        ("REFUND_REVERSED", nil, .customerAndGroup),
        ("REFUND_DECLINED", nil, .nothing),
        ("REVOKE", nil, .customerAndGroup),
        ("UNCLAIM_SEATS", nil, .customerAndGroup),
        ("CONSUMPTION_REQUEST", nil, .nothing),
        ("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", .nothing),
        ("ONE_TIME_CHARGE", nil, .nothing),
        ("PRICE_INCREASE", "PENDING", .nothing),
        ("PRICE_INCREASE", "ACCEPTED", .nothing),
        ("RENEWAL_EXTENDED", nil, .nothing),
        ("RENEWAL_EXTENSION", "SUMMARY", .nothing),
        ("RENEWAL_EXTENSION", "FAILURE", .nothing),
        ("TEST", nil, .nothing),
        // Unknown to this table: the customer is forgotten, never a whole group.
        ("SEATS_REASSIGNED", nil, .customerOnly),
        ("DID_FAIL_TO_RENEW", "SOMETHING_NEW", .customerOnly),
        ("DID_CHANGE_RENEWAL_PREF", "CROSSGRADE", .customerOnly),
    ]

    static func fields(_ type: String, _ subtype: String?) -> AppStoreNotificationFields {
        AppStoreNotificationFields(
            notificationType: type,
            subtype: subtype,
            transactionID: "2000000111",
            originalTransactionID: "2000000001",
            appTransactionID: "app-7",
            groupID: "group-9"
        )
    }

    @Test("every row of the table, exactly", arguments: 0..<table.count)
    func row(_ index: Int) throws {
        let (type, subtype, expected) = Self.table[index]
        #expect(
            try Self.fields(type, subtype).invalidations() == expected.invalidations,
            "\(type) \(subtype ?? "(none)") should be \(expected)"
        )
    }

    @Test("the group comes first, and an id given twice is invalidated once")
    func orderAndDuplicates() throws {
        let fields = AppStoreNotificationFields(
            notificationType: "REFUND",
            subtype: "SEATS",
            transactionID: "2000000001",
            originalTransactionID: "2000000001",
            groupID: "g1"
        )
        #expect(
            try fields.invalidations() == [.group(groupID: "g1"), .customer(anyTransactionID: "2000000001")]
        )
    }

    @Test("without a known group, the customer alone; with a group alone, the group alone")
    func partialFields() throws {
        #expect(
            try AppStoreNotificationFields(notificationType: "REVOKE", originalTransactionID: "1").invalidations()
                == [.customer(anyTransactionID: "1")]
        )
        #expect(
            try AppStoreNotificationFields(notificationType: "UNCLAIM_SEATS", groupID: "g1").invalidations()
                == [.group(groupID: "g1")]
        )
        // An unknown type naming nobody has nothing to forget; a known informational one neither.
        #expect(try AppStoreNotificationFields(notificationType: "SOMETHING_NEW").invalidations() == [])
        #expect(try AppStoreNotificationFields(notificationType: "TEST").invalidations() == [])
    }

    static let name = "must be 1 to 64 characters of A-Z 0-9 _"
    static let refusals: [(AppStoreNotificationFields, String)] = [
        (AppStoreNotificationFields(notificationType: ""), "the notificationType \(name)"),
        (AppStoreNotificationFields(notificationType: "refund", transactionID: "1"), "the notificationType \(name)"),
        (
            AppStoreNotificationFields(notificationType: String(repeating: "A", count: 65)),
            "the notificationType \(name)"
        ),
        (
            AppStoreNotificationFields(notificationType: "REFUND", subtype: "", transactionID: "1"),
            "the subtype \(name)"
        ),
        (AppStoreNotificationFields(notificationType: "REFUND", transactionID: ""), "the transactionId is empty"),
        (
            AppStoreNotificationFields(notificationType: "TEST", originalTransactionID: "1 OR 1=1"),
            "the originalTransactionId may hold only the characters A-Z a-z 0-9 _ -"
        ),
        (
            AppStoreNotificationFields(
                notificationType: "REVOKE",
                appTransactionID: String(repeating: "7", count: 129)
            ),
            "the appTransactionId is longer than 128 characters"
        ),
        (
            AppStoreNotificationFields(notificationType: "REFUND", subtype: "SEATS"),
            "the REFUND notification calls for an invalidation but names no transaction id and no group"
        ),
    ]

    @Test("malformed or empty fields are refused with one line naming the field", arguments: refusals)
    func refused(_ fields: AppStoreNotificationFields, _ message: String) {
        let error = #expect(throws: AppStoreGroupsError.self) { try fields.invalidations() }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message == message)
    }
}
