import AppStoreGroups
import ArgumentParsing
import Foundation
import GroupPolicy
import GroupPolicyBasics

enum FetchCommand {
    static let spec = CommandSpec(
        "fetch",
        summary: "Fetch a customer's groups or a group's members from Apple's App Store Server API.",
        subcommands: [groupsSpec, membersSpec],
        details: details
    )

    static let groupsSpec = CommandSpec(
        "groups",
        summary: "Get Customer Groups: print the response JSON, or with --policy the Decision.",
        options: [
            .init("transaction-id", value: "id", help: "Any transaction id of the customer.", required: true),
            .init("policy", value: "file", help: "Print the policy's Decision instead."),
            .entitlement(help: "With --policy: an entitlement from verified transactions (repeatable)."),
            .flag("explain", help: "With --policy: include grants and denials with provenance."),
        ] + connectionOptions,
        details: details
    )

    static let membersSpec = CommandSpec(
        "members",
        summary: "Get Group Members: print a page of members, or with --all every member.",
        options: [
            .init("group-id", value: "id", help: "The group's id.", required: true),
            .init("limit", value: "n", help: "The most members per page, 1 to 100."),
            .flag("all", help: "Follow pagination and print every member."),
        ] + connectionOptions,
        details: details
    )

    /// Credentials and where to send the requests: the same for both subcommands.
    private static let connectionOptions: [CommandSpec.Option] = [
        .init("key-id", value: "k", help: "The key id (default: $APP_STORE_KEY_ID)."),
        .init("issuer-id", value: "i", help: "The issuer id (default: $APP_STORE_ISSUER_ID)."),
        .init("bundle-id", value: "b", help: "The app's bundle id (default: $APP_STORE_BUNDLE_ID)."),
        .init("private-key", value: "file", help: "The .p8 key file (default: $APP_STORE_PRIVATE_KEY_PATH)."),
        .init("environment", value: "env", help: "sandbox (default) or production."),
        .init("base-url", value: "url", help: "Another server, such as a local test server."),
        .init(
            "timeout",
            value: "seconds",
            help: "How long one request may take in all, its retries and the waits between them included (default 10)."
        ),
    ]

    private static let details = """
        Apple serves the groups endpoints only in the sandbox today, hence the default environment.
        Failed requests are retried (429 at its Retry-After, 5xx and network failures with backoff;
        3 attempts in all), all within --timeout: one request never takes longer. Listing every member,
        each page is one request, and its members print as the page arrives; when a later page fails,
        what was printed is an unterminated document. The key and the token are never printed.
        Exit status: 0 printed the answer, 1 the App Store answered with an error,
        2 bad usage, an unreadable or invalid key, or no usable answer (network, timeout, redirect, malformed).
        """

    static func fetchGroups(_ arguments: ParsedArguments) async throws(CommandFailure) {
        let transactionID = try arguments.requiredValue("transaction-id")
        let policy: Policy?
        if let path = arguments.value("policy") {
            policy = try loadPolicy(path)
        } else {
            if !arguments.all("entitlement").isEmpty || arguments.has("explain") {
                throw arguments.usage("--entitlement and --explain need --policy")
            }
            policy = nil
        }
        let client = try makeClient(arguments)
        let response: GetCustomerGroupsResponse
        do {
            response = try await client.customerGroups(anyTransactionID: transactionID)
        } catch {
            throw failure(error)
        }
        guard let policy else {
            Terminal.out(response.jsonString(pretty: true))
            return
        }
        let context = EvaluationContext(
            environment: client.storeEnvironment,
            entitlements: Set(arguments.all("entitlement"))
        )
        let decision = policy.evaluate(response, in: context)
        Terminal.out(decision.jsonString(includingProvenance: arguments.has("explain")))
    }

    static func fetchMembers(_ arguments: ParsedArguments) async throws(CommandFailure) {
        let groupID = try arguments.requiredValue("group-id")
        var limit: Int?
        if let text = arguments.value("limit") {
            guard let value = Int(text) else {
                throw arguments.usage("--limit must be a number from 1 to 100")
            }
            limit = value
        }
        let client = try makeClient(arguments)
        do {
            guard arguments.has("all") else {
                let page = try await client.groupMembers(groupID: groupID, limit: limit)
                Terminal.out(page.jsonString(pretty: true))
                return
            }
            try await printAllMembers(client.allGroupMembers(groupID: groupID, limit: limit))
        } catch {
            throw failure(error)
        }
    }

    /// Prints each page's members as the page arrives.
    ///
    /// The whole prints as one document, `members` then `hasMore` false, exactly as one page
    /// prints; memory holds one page, not the listing (1,000 pages of 10,000 members print 1.2 GB).
    ///
    /// When a later page fails, what was printed stays an unterminated document, so it never
    /// parses as a complete listing, and the error follows on standard error.
    private static func printAllMembers(_ listing: GroupMemberSequence) async throws(AppStoreGroupsError) {
        var text: [UInt8] = Array("{\n  \"members\": [".utf8)
        var printedAny = false
        for try await page in listing.pages {
            text.reserveCapacity(text.count + page.members.count * 64)
            for member in page.members {
                text +=
                    (printedAny ? ",\n    {\n      \"appTransactionId\": " : "\n    {\n      \"appTransactionId\": ")
                    .utf8
                text += JSONWriter.quoted(member.appTransactionID).utf8
                text += "\n    }".utf8
                printedAny = true
            }
            FileHandle.standardOutput.write(Data(text))
            text.removeAll(keepingCapacity: true)
        }
        text += (printedAny ? "\n  ],\n  \"hasMore\": false\n}\n" : "],\n  \"hasMore\": false\n}\n").utf8
        FileHandle.standardOutput.write(Data(text))
    }

    /// Credentials from the flags, else the environment; any failure here is exit 2.
    private static func makeClient(_ arguments: ParsedArguments) throws(CommandFailure) -> AppStoreGroupsClient {
        let variables = ProcessInfo.processInfo.environment
        func setting(_ option: String, _ variable: String) throws(CommandFailure) -> String {
            if let value = arguments.value(option) ?? variables[variable], !value.isEmpty { return value }
            throw arguments.usage("missing --\(option) (or set \(variable))")
        }
        let keyID = try setting("key-id", "APP_STORE_KEY_ID")
        let issuerID = try setting("issuer-id", "APP_STORE_ISSUER_ID")
        let bundleID = try setting("bundle-id", "APP_STORE_BUNDLE_ID")
        let keyPath = try setting("private-key", "APP_STORE_PRIVATE_KEY_PATH")
        let storeEnvironment = try parseEnvironment(arguments, default: .sandbox)
        let server: AppStoreServer
        if let text = arguments.value("base-url") {
            guard let url = URL(string: text), url.scheme != nil else {
                throw arguments.usage("--base-url '\(text)' is not an absolute URL")
            }
            server = .custom(baseURL: url, storeEnvironment: storeEnvironment)
        } else {
            server = storeEnvironment == .production ? .production : .sandbox
        }
        let timeout = try parseTimeout(arguments)
        let pem = String(decoding: try readInput(keyPath), as: UTF8.self)
        do {
            return try AppStoreGroupsClient(
                server: server,
                credentials: AppStoreCredentials(
                    keyID: keyID,
                    issuerID: issuerID,
                    bundleID: bundleID,
                    privateKeyPEM: pem
                ),
                retryPolicy: RetryPolicy(maximumCallDuration: timeout),
                timeout: timeout
            )
        } catch {
            // Name the file for a bad key; other configuration errors are about the flags.
            let prefix = error.code == .invalidPrivateKey ? "\(keyPath): " : ""
            throw CommandFailure(.unusable, prefix + error.description)
        }
    }

    /// `--timeout`: the bound of one request in all, retries and waits included.
    ///
    /// In seconds, 0.001 to 3600 (a bound keeps the conversion to milliseconds exact and finite).
    /// 10 when not given, so that a command answers within it: the library's defaults (3 attempts
    /// of 30 s and 30 s of waits) let one request last 2 minutes.
    private static func parseTimeout(_ arguments: ParsedArguments) throws(CommandFailure) -> Duration {
        guard let text = arguments.value("timeout") else { return .seconds(10) }
        guard let seconds = Double(text), seconds >= 0.001, seconds <= 3600 else {
            throw arguments.usage("--timeout must be a number of seconds from 0.001 to 3600")
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    /// An error answer from Apple is exit 1; anything that kept the command from getting a usable
    /// answer (bad id, network, timeout, redirect, malformed body) is exit 2.
    private static func failure(_ error: AppStoreGroupsError) -> CommandFailure {
        CommandFailure(error.isErrorAnswer ? .failure : .unusable, error.description)
    }
}
