package import AppStoreGroups
package import GroupPolicy
import GroupPolicyBasics

/// A customer's answers are kept per environment: sandbox and production never share one.
package struct CustomerKey: Hashable, Sendable {
    package let environment: StoreEnvironment
    package let customerID: String
    /// Whether the id is ASCII, where `String`'s `==` already compares bytes (found once per key).
    private let isASCII: Bool

    package init(environment: StoreEnvironment, customerID: String) {
        self.environment = environment
        self.customerID = customerID
        self.isASCII = customerID.utf8.withContiguousStorageIfAvailable(Self.allASCII) ?? false
    }

    /// Whether two keys name one customer in one environment, comparing the ids byte for byte.
    ///
    /// `String`'s `==` takes canonically equivalent ids (`caf\u{E9}`, `cafe\u{301}`) for one
    /// customer, and a shared store keys them apart. Two ASCII ids are equal as strings only when
    /// their bytes are (and `String` compares them without normalising); any other pair is compared
    /// byte for byte. The hash stays consistent: ids equal here are equal as strings.
    package static func == (left: Self, right: Self) -> Bool {
        guard left.environment == right.environment else { return false }
        if left.isASCII && right.isASCII { return left.customerID == right.customerID }
        return left.customerID.isExactly(right.customerID)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(environment)
        hasher.combine(customerID)
    }

    private static func allASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0x80 }
    }
}

/// Apple limits each endpoint per environment: budgets and `Retry-After` instants are kept so.
package struct EndpointKey: Hashable, Sendable {
    package var environment: StoreEnvironment
    package var endpoint: GroupsEndpoint

    package init(environment: StoreEnvironment, endpoint: GroupsEndpoint) {
        self.environment = environment
        self.endpoint = endpoint
    }
}
