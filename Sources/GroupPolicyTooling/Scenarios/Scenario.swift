public import GroupPolicy
import GroupPolicyBasics

/// One point of the scenario space (see the DocC article "The scenario space"): a single group with
/// its role entries, in one environment, with the entitlements the app verified.
///
/// Invariant counterexamples and diff rows are scenarios. ``response`` and ``context`` turn one into
/// the inputs of `Policy.evaluate(_:in:)`; ``testCaseJSON(name:includes:excludes:)`` prints it as
/// a case to paste into a `*.tests.json` file.
public struct Scenario: Sendable, Hashable, CustomStringConvertible {
    /// The environment the response came from.
    public var environment: StoreEnvironment
    /// The group's id.
    public var groupID: String
    /// The group's type.
    public var groupType: GroupType
    /// The group's role entries (none for `CONSUMER` groups), at most one per product.
    public var roles: [RoleEntry]
    /// The entitlements the app verified, sorted.
    public var entitlements: [String]

    /// Creates a scenario.
    public init(
        environment: StoreEnvironment,
        groupID: String,
        groupType: GroupType,
        roles: [RoleEntry] = [],
        entitlements: [String] = []
    ) {
        self.environment = environment
        self.groupID = groupID
        self.groupType = groupType
        self.roles = roles
        self.entitlements = entitlements.sorted()
    }

    /// The scenario's group as a Get Customer Groups response.
    public var response: GetCustomerGroupsResponse {
        GetCustomerGroupsResponse(groups: [GroupEntry(groupID: groupID, groupType: groupType, roles: roles)])
    }

    /// The scenario's environment and entitlements.
    public var context: EvaluationContext {
        EvaluationContext(environment: environment, entitlements: Set(entitlements))
    }

    /// A short description: `Sandbox, ORGANIZATION group 7, roles [com.example.pro: ADMIN], entitlements []`.
    public var description: String {
        let entries = roles.map { "\($0.productID): \($0.role.rawValue)" }.joined(separator: ", ")
        return "\(environment.rawValue), \(groupType.rawValue) group '\(groupID)', roles [\(entries)], "
            + "entitlements [\(entitlements.joined(separator: ", "))]"
    }

    /// The scenario as a policy test case (see the DocC article "Policy test file format"), ready
    /// to paste into the `cases` of a `*.tests.json` file.
    ///
    /// - Parameters:
    ///   - name: The case's name.
    ///   - includes: Capabilities the case expects the customer to have.
    ///   - excludes: Capabilities the case expects the customer not to have.
    /// - Returns: The case's JSON object on a few lines, without a trailing newline.
    public func testCaseJSON(name: String, includes: [String] = [], excludes: [String] = []) -> String {
        Self.testCaseJSON(
            name: name,
            response: response,
            environment: environment,
            entitlements: entitlements,
            includes: includes,
            excludes: excludes
        )
    }

    /// A test case of any response (several groups, or a group with several entries), written as
    /// ``testCaseJSON(name:includes:excludes:)`` writes a scenario's.
    static func testCaseJSON(
        name: String,
        response: GetCustomerGroupsResponse,
        environment: StoreEnvironment,
        entitlements: [String],
        includes: [String],
        excludes: [String]
    ) -> String {
        var context = JSONWriter(pretty: false)
        context.beginObject()
        context.member("environment", environment.rawValue)
        context.member("entitlements", strings: entitlements)
        context.endObject()
        var expect = JSONWriter(pretty: false)
        expect.beginObject()
        if !includes.isEmpty { expect.member("includes", strings: includes) }
        if !excludes.isEmpty { expect.member("excludes", strings: excludes) }
        expect.endObject()
        var nameWriter = JSONWriter(pretty: false)
        nameWriter.string(name)
        return """
            {
              "name": \(nameWriter.string),
              "context": \(context.string),
              "response": \(response.jsonString()),
              "expect": \(expect.string)
            }
            """
    }

    /// Writes the context as a test file spells it: `{"environment":…,"entitlements":[…]}`.
    func writeContext(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("environment", environment.rawValue)
        writer.member("entitlements", strings: entitlements)
        writer.endObject()
    }
}
