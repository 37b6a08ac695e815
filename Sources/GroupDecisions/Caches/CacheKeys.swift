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
