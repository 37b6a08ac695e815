package import AppStoreGroups
package import GroupPolicy

/// A customer's answers are kept per environment: sandbox and production never share one.
package struct CustomerKey: Hashable, Sendable {
    package var environment: StoreEnvironment
    package var customerID: String

    package init(environment: StoreEnvironment, customerID: String) {
        self.environment = environment
        self.customerID = customerID
    }

    /// Whether two keys name one customer in one environment, comparing the ids byte for byte.
    ///
    /// `String`'s `==` takes canonically equivalent ids (`caf\u{E9}`, `cafe\u{301}`) for one
    /// customer, and a shared store keys them apart. The synthesized hash stays consistent: ids
    /// equal here are equal as strings.
    package static func == (left: Self, right: Self) -> Bool {
        left.environment == right.environment && left.customerID.utf8.elementsEqual(right.customerID.utf8)
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
