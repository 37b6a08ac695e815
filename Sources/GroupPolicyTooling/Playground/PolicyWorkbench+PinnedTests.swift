public import GroupPolicy
import GroupPolicyBasics

extension PolicyWorkbench {
    /// The test case that pins what the edited policy set decides for one capability, added to the
    /// test file whose policy declares the capability: the "add test" of the playground.
    ///
    /// With a group, the case pins the capability in that group: its response is that group's
    /// entry alone (a ``Scenario``), unless the response has several entries with its id, which
    /// are kept together; without one (a "why not"), it pins the customer's capabilities over the
    /// whole response. The case `includes` the capability when the edited set grants it, and
    /// `excludes` it otherwise. The test file is the first of ``testFiles`` (as edited) whose
    /// policy declares the capability; nothing is written.
    ///
    /// - Parameters:
    ///   - capability: The capability the author sees granted or not.
    ///   - group: The group it is seen in, or `nil` for the whole customer.
    ///   - response: The response evaluated.
    ///   - responseName: What the response is called in the case's name.
    ///   - context: The environment and entitlements.
    /// - Returns: The case and the test file's text with it.
    /// - Throws: `invalidPolicy` when the edited set does not load; `undeclaredCapability` when no
    ///   policy declares the capability; `invalidTestFile` when no test file of the directory
    ///   tests a policy that declares it, or that file's text cannot take a case.
    public func pinTestCase(
        capability: String,
        group: String?,
        response: GetCustomerGroupsResponse,
        responseName: String,
        context: EvaluationContext
    ) throws(GroupPolicyError) -> PinnedTestCase {
        let policy = try policy()
        guard policy.capabilities.contains(where: { $0.name.isExactly(capability) }) else {
            throw GroupPolicyError(
                code: .undeclaredCapability,
                message: "undeclared capability '\(capability)'".escapingControlCharacters
            )
        }
        let decision = policy.evaluate(response, in: context)
        let entries = group.map { id in response.groups.filter { $0.groupID.isExactly(id) } } ?? []
        let granted =
            group.map { decision.allows(Capability(capability), inGroup: $0) }
            ?? decision.allows(Capability(capability))
        let entitlements = context.entitlements.sorted { ExactName($0) < ExactName($1) }
        let pinned: GetCustomerGroupsResponse
        let subject: String
        if group != nil, entries.count == 1, let entry = entries.first {
            let scenario = Scenario(
                environment: context.environment,
                groupID: entry.groupID,
                groupType: entry.groupType,
                roles: entry.roles,
                entitlements: entitlements
            )
            pinned = scenario.response
            subject = scenario.description
        } else {
            pinned = group.map { _ in GetCustomerGroupsResponse(groups: entries) } ?? response
            subject =
                "\(context.environment.rawValue), \(group.map { "group '\($0)' of " } ?? "")\(responseName), "
                + "entitlements [\(entitlements.joined(separator: ", "))]"
        }
        let name = "'\(capability)' is \(granted ? "granted" : "not granted") in \(subject)"
        let file = try testFile(declaring: capability)
        let fileName = Self.fileName(of: file)
        let added = try PinnedTestCase.adding(to: try loader().read(file), fileName: file, name: name) { unique in
            Scenario.testCaseJSON(
                name: unique,
                response: pinned,
                environment: context.environment,
                entitlements: entitlements,
                includes: granted ? [capability] : [],
                excludes: granted ? [] : [capability]
            )
        }
        return PinnedTestCase(
            file: fileName,
            name: added.name,
            granted: granted,
            caseJSON: added.caseJSON,
            text: added.text
        )
    }

    /// The first test file of the directory (as edited) whose policy declares `capability`.
    private func testFile(declaring capability: String) throws(GroupPolicyError) -> String {
        let loader = loader()
        for path in testFiles {
            guard let suite = try? PolicyTestSuite(contentsOfFile: path, loader: loader) else { continue }
            if suite.policy.capabilities.contains(where: { $0.name.isExactly(capability) }) { return path }
        }
        throw GroupPolicyError(
            code: .invalidTestFile,
            message: "no test file in \(directory) that loads tests a policy declaring '\(capability)' "
                + "(add a *.tests.json beside the policy to pin tests from the playground)"
        )
    }
}
