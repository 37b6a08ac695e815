import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicyBasics
import HTTPServing

/// The server's settings: each flag, or its environment variable (`--cache-ttl` is
/// `GROUP_DECISION_SERVER_CACHE_TTL`; a flag wins over its variable), and the environment for App
/// Store credentials (the same variables as `group-policy fetch`).
struct Configuration {
    var host = "127.0.0.1"
    var port = 8080
    var policies = "Policies"
    /// A candidate policy evaluated beside `policies` for every decision, reported at `GET /shadow`.
    var candidatePolicies: String?
    /// How long an answer from Apple is reused.
    ///
    /// Five minutes by default: each customer then costs at most 12 Get Customer Groups
    /// requests an hour, while Apple's limit is enforced per hour per app (50 requests a second
    /// in production, a tenth of that in the sandbox). Groups change rarely, and what a stale answer
    /// can show is presentation only: content follows verified transactions, never the cache.
    var cacheTTL: Duration = .seconds(300)
    /// The oldest answer ever served (stale while the budget spares no token to refresh it):
    /// `--max-age`, an hour by default, or `--cache-ttl` when that is longer.
    var maxAge: Duration?
    /// When a fresh answer is refreshed in the background, as a fraction of `--cache-ttl`; `nil`
    /// (`--refresh-ahead 0`) for never.
    var refreshAhead: Double? = 0.75
    var reloadInterval: Duration = .seconds(5)
    /// The most bytes customers' cached groups may take in this process (the library's estimate).
    var cacheBytes = 64 << 20
    /// A Redis shared by every server of the fleet: answers, fetch locks, the 429 instant and the
    /// request budget.
    var redis: (host: String, port: Int)?
    /// Where one JSON line per decision goes: a file, or `-` for standard output.
    var decisionLog: String?
    /// The salt of the decision log's customer hashes (`DECISION_LOG_SALT`); random per process
    /// when unset, so hashes then join within one run only.
    var decisionLogSalt: [UInt8]?
    /// The most bytes of lines waiting for a slow reader: of standard error, and of the decision log.
    var logBufferBytes = 1 << 20
    /// Requests a second to each App Store endpoint: the fleet's with `--redis` (the budget is
    /// kept in Redis), this process's without; Apple's limit for the environment when unset.
    var requestsPerSecond: Double?
    /// The share of the budget a server spends of its own while Redis fails (`--fallback-share`).
    var fallbackShare: Double = 0
    var limits = HTTPServer.Limits()
    /// The token `POST /invalidate` and `POST /shadow/reset` must present; required to listen on
    /// anything but loopback.
    var adminToken: AdminToken?
    /// How long a stop (SIGTERM, SIGINT) lets the requests in flight finish.
    var shutdownGrace: Duration = .seconds(10)
    /// Another server for the App Store requests (a local test server); Apple's hosts otherwise.
    var baseURL: URL?
    var credentials = AppStoreCredentials(keyID: "", issuerID: "", bundleID: "", privateKeyPEM: "")
    var wantsHelp = false

    static let spec = CommandLineOptions(
        name: "group-decision-server",
        summary: "Serves GroupPolicy decisions over HTTP to app servers in any language.",
        options: [
            .init(
                "host",
                value: "address",
                help: "The IPv4 address to listen on (default 127.0.0.1; any other needs --admin-token-file)."
            ),
            .init("port", value: "port", help: "0 to 65535 (default 8080; 0 picks a free port)."),
            .init("policies", value: "path", help: "The policy file or directory (default Policies)."),
            .init(
                "candidate-policies",
                value: "path",
                help: "A candidate policy compared with every decision served, reloaded like the policies."
            ),
            .init("cache-ttl", value: "seconds", help: "How long an answer from Apple is reused (default 300)."),
            .init(
                "max-age",
                value: "seconds",
                help: "The oldest answer served, stale while the budget spares no token to refresh it "
                    + "(default 3600, or --cache-ttl when longer; at least --cache-ttl)."
            ),
            .init(
                "refresh-ahead",
                value: "fraction",
                help: "Refresh an answer in the background once this fraction of --cache-ttl has passed, "
                    + "0 to 1 (default 0.75; 0 never). --refresh-ahead 0 --max-age TTL: a fixed time to live."
            ),
            .init("reload-interval", value: "seconds", help: "How often the policies are reloaded (default 5)."),
            .init("read-timeout", value: "seconds", help: "How long a request's head may take (default 5)."),
            .init("max-connections", value: "n", help: "Requests answered at once, 1 to 4096 (default 64)."),
            .init(
                "max-waiting",
                value: "n",
                help: "Connections waiting for their request heads, 1 to 65536 (default 1024)."
            ),
            .init("cache-bytes", value: "bytes", help: "The most bytes cached answers may take (default 64 MiB)."),
            .init("base-url", value: "url", help: "Another server for the App Store requests (a local test server)."),
            .init(
                "redis",
                value: "host:port",
                help: "A Redis shared by the fleet: answers, fetch locks, the 429 instant, the request budget."
            ),
            .init(
                "decision-log",
                value: "file",
                help: "One JSON line per decision to the file, or - for standard output."
            ),
            .init(
                "requests-per-second",
                value: "n",
                help: "The App Store budget, each endpoint (default Apple's limit): the fleet's with --redis "
                    + "(a server cut off from Redis sends nothing more, see --fallback-share); this process's without."
            ),
            .init(
                "fallback-share",
                value: "fraction",
                help: "With --redis, the share of the budget a server cut off from Redis still spends of its own, "
                    + "0 to 1 (default 0: the fleet never exceeds its budget; with k servers cut off, a share s "
                    + "lets it send up to 1 + k × s times it)."
            ),
            .init(
                "admin-token-file",
                value: "file",
                help: "A file holding the token (32 characters or more) POST /invalidate and POST /shadow/reset "
                    + "must present as 'Authorization: Bearer TOKEN'; required off loopback."
            ),
            .init(
                "shutdown-grace",
                value: "seconds",
                help: "On SIGTERM or SIGINT, how long requests in flight may take to finish (default 10)."
            ),
            .init(
                "log-buffer",
                value: "bytes",
                help: "Log lines waiting for a slow reader, each log; beyond it they are dropped (default 1 MiB)."
            ),
        ],
        details: """
            Freshness: an answer is fresh for --cache-ttl and refreshed in the background from
            --refresh-ahead of it (one request for the fleet with --redis). Past --cache-ttl it is fetched
            again, but while the budget has no token to spare beyond a fifth kept for customers with no
            answer, it is served stale (groupsSource "stale", groupsStaleReason, groupsAgeMilliseconds),
            never past --max-age. A customer with no answer waits up to a second for a token, then gets
            503 with Retry-After.

            Answers:
              GET /decision?transactionId=ID[&environment=sandbox|production][&entitlement=E]...[&explain=true][&whyNot=CAPABILITY]
              GET /workspace/members?transactionId=ID&groupId=GROUP[&environment=...][&entitlement=E]...
              POST /invalidate?transactionId=ID, ?groupId=GROUP or ?all=true (one of them)
              GET /shadow          what the candidate would change, since the last reset or reload
              POST /shadow/reset   starts that report again

            With --candidate-policies, every decision is evaluated under the candidate too; the answer
            served is always the policies' own. A candidate that does not load changes nothing but the
            report (its candidateRevision is null): the server serves and tries it again at each
            reload interval.

              GET /healthz         alive;  GET /readyz  ready to serve (503 with the reason otherwise)
              GET /metrics         Prometheus text;  GET /openapi.json  the contract (OpenAPI 3.1)

            Every option can come from the environment instead: GROUP_DECISION_SERVER_ and its name in
            capitals with underscores (--cache-ttl 600 is GROUP_DECISION_SERVER_CACHE_TTL=600); an
            option on the command line wins. Credentials come from APP_STORE_KEY_ID,
            APP_STORE_ISSUER_ID, APP_STORE_BUNDLE_ID and APP_STORE_PRIVATE_KEY_PATH (a .p8 file); the
            decision log's salt from DECISION_LOG_SALT. No secret is ever printed. The server trusts its
            callers (entitlements are theirs to verify): keep it on loopback or a private network.
            """
    )

    /// The help, without its last newline (the server prints it as a line).
    static let usage = String(spec.help.dropLast())

    struct Failure: Error {
        var message: String
    }

    /// The largest private key file read: a `.p8` key is about 250 bytes.
    static let maximumPrivateKeyBytes = 64 << 10

    /// The environment variable of an option: `cache-ttl` is `GROUP_DECISION_SERVER_CACHE_TTL`.
    static func variable(_ option: String) -> String {
        "GROUP_DECISION_SERVER_" + option.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    static func parse(_ arguments: [String], environment: [String: String]) throws(Failure) -> Configuration {
        func variable(_ option: String) -> String { Self.variable(option) }
        var configuration = Configuration()
        var values: [String: String]
        do {
            guard let given = try spec.parse(arguments) else {
                configuration.wantsHelp = true
                return configuration
            }
            values = given
        } catch {
            throw Failure(message: error.message)
        }
        // An option not on the command line may come from its environment variable; a message
        // about it names where it came from.
        var fromEnvironment: Set<String> = []
        for option in spec.options where values[option.name] == nil {
            if let value = environment[variable(option.name)], !value.isEmpty {
                values[option.name] = value
                fromEnvironment.insert(option.name)
            }
        }
        func flag(_ name: String) -> String {
            fromEnvironment.contains(name) ? variable(name) : "--\(name)"
        }
        func seconds(_ name: String) throws(Failure) -> Duration? {
            guard let text = values[name] else { return nil }
            guard let seconds = Int(text), seconds > 0 else {
                throw Failure(message: "\(flag(name)) must be a positive number of seconds, not '\(text)'")
            }
            return .seconds(seconds)
        }
        func count(_ name: String, in range: ClosedRange<Int>) throws(Failure) -> Int? {
            guard let text = values[name] else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw Failure(
                    message: "\(flag(name)) must be \(range.lowerBound) to \(range.upperBound), not '\(text)'"
                )
            }
            return number
        }
        configuration.host = values["host"] ?? configuration.host
        configuration.port = try count("port", in: 0...65535) ?? configuration.port
        configuration.policies = values["policies"] ?? configuration.policies
        configuration.candidatePolicies = values["candidate-policies"]
        // Read again every --reload-interval: a FIFO held the start (and would hold every reload)
        // until something wrote to it, without a word.
        for (name, path) in [
            ("policies", configuration.policies), ("candidate-policies", configuration.candidatePolicies),
        ] {
            if let path, (try? FileStatus(path: path))?.kind == .fifo {
                throw Failure(
                    message: "\(flag(name)) \(path) is a FIFO: give a policy file or directory (it is read again "
                        + "every \(flag("reload-interval")))"
                )
            }
        }
        configuration.cacheTTL = try seconds("cache-ttl") ?? configuration.cacheTTL
        configuration.maxAge = try seconds("max-age")
        // Bounded as the service's durations are, and checked here so that the message names the
        // flag: the service counts the cap past the time to live, not the total age this flag gives.
        for (name, value) in [("cache-ttl", configuration.cacheTTL), ("max-age", configuration.maxAge)] {
            let longest = GroupDecisionService.Configuration.longestDuration
            if let value, value > longest {
                throw Failure(
                    message: "\(flag(name)) must be at most 10 years (\(longest.components.seconds) seconds), "
                        + "not '\(value.components.seconds)'"
                )
            }
        }
        if let maxAge = configuration.maxAge, maxAge < configuration.cacheTTL {
            throw Failure(
                message:
                    "\(flag("max-age")) must be at least \(flag("cache-ttl")) (\(configuration.cacheTTL.components.seconds) "
                    + "seconds), not '\(maxAge.components.seconds)'"
            )
        }
        if let text = values["refresh-ahead"] {
            guard let fraction = Double(text), fraction >= 0, fraction < 1 else {
                throw Failure(
                    message: "\(flag("refresh-ahead")) must be a fraction from 0 (never) to less than 1, not '\(text)'"
                )
            }
            // A fraction so small that its share of --cache-ttl is no time at all would be refused
            // by the service naming its own field: refused here, naming the flag.
            if fraction > 0, !(configuration.cacheTTL * fraction >= .milliseconds(1)) {
                throw Failure(
                    message: "\(flag("refresh-ahead")) must be 0 (never) or a fraction giving at least a millisecond "
                        + "of \(flag("cache-ttl")) (\(configuration.cacheTTL.components.seconds) seconds), not '\(text)'"
                )
            }
            configuration.refreshAhead = fraction == 0 ? nil : fraction
        }
        configuration.reloadInterval = try seconds("reload-interval") ?? configuration.reloadInterval
        // Bounded as the service's durations are: the reload loop's sleep traps on an interval near
        // Int64.max seconds, after the server has started listening.
        let longest = GroupDecisionService.Configuration.longestDuration
        if configuration.reloadInterval > longest {
            throw Failure(
                message: "\(flag("reload-interval")) must be at most 10 years (\(longest.components.seconds) seconds), "
                    + "not '\(values["reload-interval"] ?? "")'"
            )
        }
        configuration.limits.readTimeout = try seconds("read-timeout") ?? configuration.limits.readTimeout
        configuration.limits.maximumRequests =
            try count("max-connections", in: 1...4096) ?? configuration.limits.maximumRequests
        configuration.limits.maximumWaiting =
            try count("max-waiting", in: 1...65_536) ?? configuration.limits.maximumWaiting
        configuration.cacheBytes = try count("cache-bytes", in: 0...(1 << 40)) ?? configuration.cacheBytes
        if let text = values["base-url"] {
            guard let url = URL(string: text), url.scheme != nil else {
                throw Failure(message: "\(flag("base-url")) '\(text)' is not an absolute URL")
            }
            configuration.baseURL = url
        }
        if let text = values["redis"] {
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                (1...65_535).contains(port), colon > text.startIndex
            else {
                throw Failure(message: "\(flag("redis")) must be HOST:PORT, not '\(text)'")
            }
            configuration.redis = (String(text[..<colon]), port)
        }
        configuration.decisionLog = values["decision-log"]
        if let rate = try count("requests-per-second", in: 1...1_000_000) {
            configuration.requestsPerSecond = Double(rate)
        }
        if let text = values["fallback-share"] {
            guard let share = Double(text), share >= 0, share <= 1 else {
                throw Failure(message: "\(flag("fallback-share")) must be a fraction from 0 to 1, not '\(text)'")
            }
            configuration.fallbackShare = share
        }
        configuration.logBufferBytes = try count("log-buffer", in: 4096...(1 << 30)) ?? configuration.logBufferBytes
        configuration.shutdownGrace = try seconds("shutdown-grace") ?? configuration.shutdownGrace
        if configuration.shutdownGrace > .seconds(3600) {
            throw Failure(message: "\(flag("shutdown-grace")) must be at most 3600 seconds")
        }
        if let path = values["admin-token-file"] {
            do {
                configuration.adminToken = try AdminToken(file: path)
            } catch {
                throw Failure(message: "\(flag("admin-token-file")): \(error.message)")
            }
        }
        // Off loopback, anyone who can reach the port could drop every cached answer.
        if !configuration.host.hasPrefix("127."), configuration.adminToken == nil {
            throw Failure(
                message: "listening on \(configuration.host) needs --admin-token-file "
                    + "(\(variable("admin-token-file"))): POST /invalidate and POST /shadow/reset must not be open "
                    + "to whoever reaches the port"
            )
        }
        if let salt = environment["DECISION_LOG_SALT"], !salt.isEmpty {
            do {
                try DecisionLog.checkSalt(Array(salt.utf8))
            } catch {
                throw Failure(message: "DECISION_LOG_SALT: \(error.message)")
            }
            configuration.decisionLogSalt = Array(salt.utf8)
        }
        func setting(_ name: String) throws(Failure) -> String {
            guard let value = environment[name], !value.isEmpty else { throw Failure(message: "set \(name)") }
            return value
        }
        let keyPath = try setting("APP_STORE_PRIVATE_KEY_PATH")
        let pem: [UInt8]
        do {
            pem = try AdminToken.readSecretFile(keyPath, maximumBytes: Self.maximumPrivateKeyBytes)
        } catch {
            throw Failure(message: "APP_STORE_PRIVATE_KEY_PATH: \(error.message)")
        }
        configuration.credentials = AppStoreCredentials(
            keyID: try setting("APP_STORE_KEY_ID"),
            issuerID: try setting("APP_STORE_ISSUER_ID"),
            bundleID: try setting("APP_STORE_BUNDLE_ID"),
            privateKeyPEM: String(decoding: pem, as: UTF8.self)
        )
        return configuration
    }
}
