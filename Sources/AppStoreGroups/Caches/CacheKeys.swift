import GroupPolicy

/// A customer's answers are kept per environment: sandbox and production never share one.
struct CustomerKey: Hashable, Sendable {
    var environment: StoreEnvironment
    var customerID: String
}

/// Apple limits each endpoint per environment: budgets and `Retry-After` instants are kept so.
struct EndpointKey: Hashable, Sendable {
    var environment: StoreEnvironment
    var endpoint: GroupsEndpoint
}
