import AppStoreGroups
import Foundation
import GroupDecisions
import GroupDecisionsRedis
import GroupPolicy

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts the decision server: loads the policies into a reloading store, makes one App Store
/// client per environment, and serves until the process is stopped.
@main
enum DecisionServerCommand {
    static func main() {
        // A parent may start us with signals blocked (Foundation's Process on Linux does); a server
        // must still stop on SIGTERM and SIGINT. Threads started later inherit this mask.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        pthread_sigmask(SIG_SETMASK, &unblocked, nil)

        let configuration: Configuration
        do {
            configuration = try Configuration.parse(
                Array(CommandLine.arguments.dropFirst()),
                environment: ProcessInfo.processInfo.environment
            )
        } catch {
            fail(error.message, usage: true, status: 2)
        }
        ServerLog.setBufferBytes(configuration.logBufferBytes)
        if configuration.wantsHelp {
            say(Configuration.usage)
            exit(0)
        }

        let store: PolicyStore
        do {
            store = try PolicyStore(contentsOf: configuration.policies, reloadInterval: configuration.reloadInterval)
        } catch {
            for line in error.description.split(separator: "\n") { log(String(line)) }
            fail("the policies in \(configuration.policies) do not load", status: 1)
        }
        for warning in store.current.warnings { log("\(warning)") }
        let candidate = configuration.candidatePolicies.map {
            CandidatePolicies.load($0, reloadInterval: configuration.reloadInterval)
        }

        var clients: [StoreEnvironment: AppStoreGroupsClient] = [:]
        for environment in StoreEnvironment.allCases {
            let target: AppStoreServer =
                if let baseURL = configuration.baseURL {
                    .custom(baseURL: baseURL, storeEnvironment: environment)
                } else {
                    environment == .production ? .production : .sandbox
                }
            do {
                // A decision waits for this fetch: fail within seconds rather than Apple's 30. A 429
                // is not waited out inside a request: the service's gate answers every caller 503
                // until the instant Apple named, and nothing goes to that endpoint before it.
                clients[environment] = try AppStoreGroupsClient(
                    server: target,
                    credentials: configuration.credentials,
                    retryPolicy: RetryPolicy(maximumRateLimitWait: .zero),
                    timeout: .seconds(10)
                )
            } catch {
                fail("\(error)", status: 2)
            }
        }

        var settings = GroupDecisionService.Configuration()
        // The process is the server's alone: handing the cache's freed pages back to the system
        // (malloc_trim, on the whole heap) is its decision to make, and keeps its footprint bounded.
        settings.localCache.returnsFreedMemoryToSystem = true
        // --max-age is the total age since the fetch; the policy counts its cap past the time to
        // live (the flags are checked so that it is never negative).
        var freshness = FreshnessPolicy(timeToLive: configuration.cacheTTL)
        freshness.maximumStaleness =
            configuration.maxAge.map { $0 - configuration.cacheTTL } ?? freshness.maximumStaleness
        freshness.refreshAfter = configuration.refreshAhead.map { configuration.cacheTTL * $0 }
        settings.freshness = freshness
        settings.localCache.capacityBytes = configuration.cacheBytes
        settings.rateLimits.fallbackShare = configuration.fallbackShare
        if let rate = configuration.requestsPerSecond {
            settings.rateLimits.requestsPerSecond = [.production: rate, .sandbox: rate]
        }
        // A request waits for its turn in the budget for at most a second; a 429's instant is
        // not waited out: every caller gets 503 with Retry-After until then.
        settings.rateLimits.maximumRateLimitWait = .seconds(1)
        var sharedCache: RedisGroupsCache?
        if let redis = configuration.redis {
            do {
                sharedCache = try RedisGroupsCache(
                    host: redis.host,
                    port: redis.port,
                    keyPrefix: "group-policy:\(configuration.credentials.bundleID)"
                )
            } catch {
                fail("\(error)", status: 2)
            }
        }
        var decisionLog: DecisionLog?
        if let path = configuration.decisionLog {
            let salt = configuration.decisionLogSalt ?? (0..<32).map { _ in UInt8.random(in: 0...255) }
            if configuration.decisionLogSalt == nil {
                log("DECISION_LOG_SALT is not set: the decision log's customer hashes join within this run only")
            }
            do {
                decisionLog = try DecisionLog.jsonLines(
                    path: path,
                    salt: salt,
                    bufferBytes: configuration.logBufferBytes,
                    onLoss: ServerLog.decisionLogLoss
                )
            } catch {
                fail("\(error)", status: 2)
            }
        }
        let service: GroupDecisionService
        do {
            service = try GroupDecisionService(
                policies: store,
                clients: Array(clients.values),
                sharedCache: sharedCache,
                configuration: settings,
                observer: ServerObserver(),
                decisionLog: decisionLog,
                candidatePolicies: candidate?.store
            )
        } catch {
            fail("\(error)", status: 2)
        }
        let routes = DecisionRoutes(service: service, clients: clients)
        let server: HTTPServer
        do {
            server = try HTTPServer(
                host: configuration.host,
                port: configuration.port,
                limits: configuration.limits,
                handler: routes.respond
            )
        } catch {
            fail(error.description, status: 2)
        }

        // The policies' reloads and the service's sweeping, for as long as the process runs. Detached:
        // `main` runs on the main actor, whose thread `server.run()` then keeps forever, so a task
        // inheriting that actor would never start. Reloads reach the log through the observer.
        Task.detached {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await store.run() }
                group.addTask { try await service.run() }
                if let path = configuration.candidatePolicies {
                    group.addTask {
                        try await CandidatePolicies.run(
                            candidate ?? (nil, nil),
                            path: path,
                            reloadInterval: configuration.reloadInterval,
                            service: service
                        )
                    }
                }
            }
        }
        say("DecisionServer listening on http://\(configuration.host):\(server.port)")
        server.run()
    }

    /// A line on standard output, unbuffered (tests wait for the listening line).
    static func say(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// A log line on standard error; control characters in it are escaped, so it stays one line.
    static func log(_ text: String) {
        ServerLog.line(text)
    }

    /// `Error: message` on one line, then the usage when asked, and exit.
    static func fail(_ message: String, usage: Bool = false, status: Int32) -> Never {
        log("Error: \(message)")
        ServerLog.flush()
        if usage { FileHandle.standardError.write(Data("\n\(Configuration.usage)\n".utf8)) }
        exit(status)
    }
}
