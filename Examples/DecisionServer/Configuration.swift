import AppStoreGroups
import Foundation

/// The server's settings: flags for where and how to serve, the environment for App Store
/// credentials (the same variables as `group-policy fetch`).
struct Configuration {
    var host = "127.0.0.1"
    var port = 8080
    var policies = "Policies"
    /// How long an answer from Apple is reused.
    ///
    /// Five minutes by default: each customer then costs at most 12 Get Customer Groups
    /// requests an hour, while Apple's limit is enforced per hour per app (50 requests a second
    /// in production, a tenth of that in the sandbox). Groups change rarely, and what a stale answer
    /// can show is presentation only: content follows verified transactions, never the cache.
    var cacheTTL: Duration = .seconds(300)
    var reloadInterval: Duration = .seconds(5)
    /// The most bytes customers' cached groups may take in this process (the library's estimate).
    var cacheBytes = 64 << 20
    /// A Redis shared by every server of the fleet: answers, fetch locks and the 429 instant.
    var redis: (host: String, port: Int)?
    /// Where one JSON line per decision goes: a file, or `-` for standard output.
    var decisionLog: String?
    /// The salt of the decision log's customer hashes (`DECISION_LOG_SALT`); random per process
    /// when unset, so hashes then join within one run only.
    var decisionLogSalt: [UInt8]?
    /// Get Customer Groups requests a second from this process; Apple's limit for the environment
    /// when unset.
    var requestsPerSecond: Double?
    var limits = HTTPServer.Limits()
    /// Another server for the App Store requests (a local test server); Apple's hosts otherwise.
    var baseURL: URL?
    var credentials = AppStoreCredentials(keyID: "", issuerID: "", bundleID: "", privateKeyPEM: "")
    var wantsHelp = false

    static let usage = """
        Usage: DecisionServer [--host 127.0.0.1] [--port 8080] [--policies Policies] [--cache-ttl SECONDS]
                              [--reload-interval SECONDS] [--read-timeout SECONDS] [--max-connections N]
                              [--cache-bytes BYTES] [--base-url URL] [--redis HOST:PORT]
                              [--decision-log FILE|-] [--requests-per-second N]

        Serves GroupPolicy decisions over HTTP:
          GET /decision?transactionId=ID[&environment=sandbox|production][&entitlement=E]...[&explain=true]
          GET /workspace/members?transactionId=ID&groupId=GROUP[&environment=...][&entitlement=E]...
          POST /invalidate?transactionId=ID   or   POST /invalidate?all=true

        Credentials come from APP_STORE_KEY_ID, APP_STORE_ISSUER_ID, APP_STORE_BUNDLE_ID and
        APP_STORE_PRIVATE_KEY_PATH (a .p8 file); the decision log's salt from DECISION_LOG_SALT. The
        server trusts its callers (entitlements are theirs to verify): keep it on loopback or a
        private network.
        """

    struct Failure: Error {
        var message: String
    }

    static func parse(_ arguments: [String], environment: [String: String]) throws(Failure) -> Configuration {
        var configuration = Configuration()
        var remaining = arguments[...]
        func value(_ flag: String) throws(Failure) -> String {
            guard let value = remaining.popFirst() else { throw Failure(message: "\(flag) needs a value") }
            return value
        }
        func seconds(_ flag: String) throws(Failure) -> Duration {
            let text = try value(flag)
            guard let seconds = Int(text), seconds > 0 else {
                throw Failure(message: "\(flag) must be a positive number of seconds, not '\(text)'")
            }
            return .seconds(seconds)
        }
        func count(_ flag: String, in range: ClosedRange<Int>) throws(Failure) -> Int {
            let text = try value(flag)
            guard let number = Int(text), range.contains(number) else {
                throw Failure(message: "\(flag) must be \(range.lowerBound) to \(range.upperBound), not '\(text)'")
            }
            return number
        }
        while let flag = remaining.popFirst() {
            switch flag {
            case "--host": configuration.host = try value(flag)
            case "--port":
                let text = try value(flag)
                guard let port = Int(text), (0...65535).contains(port) else {
                    throw Failure(message: "--port must be 0 to 65535, not '\(text)'")
                }
                configuration.port = port
            case "--policies": configuration.policies = try value(flag)
            case "--cache-ttl": configuration.cacheTTL = try seconds(flag)
            case "--reload-interval": configuration.reloadInterval = try seconds(flag)
            case "--read-timeout": configuration.limits.readTimeout = try seconds(flag)
            case "--max-connections":
                configuration.limits.maximumConnections = try count(flag, in: 1...4096)
            case "--cache-bytes":
                configuration.cacheBytes = try count(flag, in: 0...(1 << 40))
            case "--base-url":
                let text = try value(flag)
                guard let url = URL(string: text), url.scheme != nil else {
                    throw Failure(message: "--base-url '\(text)' is not an absolute URL")
                }
                configuration.baseURL = url
            case "--redis":
                let text = try value(flag)
                guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                    (1...65_535).contains(port), colon > text.startIndex
                else {
                    throw Failure(message: "--redis must be HOST:PORT, not '\(text)'")
                }
                configuration.redis = (String(text[..<colon]), port)
            case "--decision-log": configuration.decisionLog = try value(flag)
            case "--requests-per-second":
                configuration.requestsPerSecond = Double(try count(flag, in: 1...1_000_000))
            case "--help", "-h": configuration.wantsHelp = true
            default: throw Failure(message: "unknown argument '\(flag)'")
            }
        }
        if configuration.wantsHelp { return configuration }
        func setting(_ name: String) throws(Failure) -> String {
            guard let value = environment[name], !value.isEmpty else { throw Failure(message: "set \(name)") }
            return value
        }
        if let salt = environment["DECISION_LOG_SALT"], !salt.isEmpty {
            guard salt.utf8.count >= 16 else { throw Failure(message: "DECISION_LOG_SALT must be at least 16 bytes") }
            configuration.decisionLogSalt = Array(salt.utf8)
        }
        let keyPath = try setting("APP_STORE_PRIVATE_KEY_PATH")
        guard let pem = FileManager.default.contents(atPath: keyPath) else {
            throw Failure(message: "cannot read the private key \(keyPath)")
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
