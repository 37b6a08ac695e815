import AppStoreGroups
import Dispatch
import Foundation
import GroupDecisions
import GroupDecisionsRedis
import GroupPolicy
import HTTPServing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Starts the decision server: loads the policies into a reloading store, makes one App Store
/// client per environment, and serves until SIGTERM or SIGINT, then finishes the requests in
/// flight, flushes the decision log and exits 0.
@main
enum GroupDecisionServer {
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
                // A decision waits for this fetch: fail within seconds rather than Apple's 30, and
                // within 10 seconds in all, retries included (three attempts of 10 seconds each at
                // an App Store that does not answer outlasted the HTTP layer's 30-second limit). A
                // 429 is not waited out inside a request: the service's gate answers every caller
                // 503 until the instant Apple named, and nothing goes to that endpoint before it.
                clients[environment] = try AppStoreGroupsClient(
                    server: target,
                    credentials: configuration.credentials,
                    retryPolicy: RetryPolicy(maximumRateLimitWait: .zero, maximumCallDuration: Self.fetchTimeout),
                    timeout: Self.fetchTimeout
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
        let metrics = ServerMetrics()
        let service: GroupDecisionService
        do {
            service = try GroupDecisionService(
                policies: store,
                clients: Array(clients.values),
                sharedCaches: sharedCache.map { SharedCaches($0) } ?? SharedCaches(),
                configuration: settings,
                observer: ServerObserver(metrics: metrics),
                decisionLog: decisionLog,
                candidatePolicies: candidate?.store
            )
        } catch {
            fail("\(error)", status: 2)
        }
        var http = HTTPServer.Configuration()
        http.host = configuration.host
        http.port = configuration.port
        http.limits = configuration.limits
        http.commonHeaderFields = [("Cache-Control", "no-store")]
        let server: HTTPServer
        do {
            server = try HTTPServer(http)
        } catch {
            fail(error.description, status: 2)
        }
        let routes = DecisionRoutes(
            service: service,
            clients: clients,
            operations: OperationsRoutes(
                service: service,
                metrics: metrics,
                sharedCache: sharedCache.map {
                    ($0, "\(configuration.redis?.host ?? ""):\(configuration.redis?.port ?? 0)")
                },
                requestsInFlight: { server.requestsInFlight }
            ),
            adminToken: configuration.adminToken
        )

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
        let stops = stopOnSignals(server, within: configuration.shutdownGrace)
        let access = AccessRecorder(metrics: metrics)
        metrics.beforeScrape = access.drain
        access.start()
        say("group-decision-server listening on http://\(configuration.host):\(server.port)")
        server.run(handler(routes, access: access))
        withExtendedLifetime(stops) {}
        access.drain()
        // Stopped: every accepted request is answered; what was logged goes out before the exit.
        if let decisionLog, !decisionLog.flush(within: .seconds(5)) {
            log("the decision log was not flushed within 5 seconds: its last records may be missing")
        }
        log("stopped")
        ServerLog.flush()
        exit(0)
    }

    /// The longest one fetch from the App Store may take, every attempt together.
    static let fetchTimeout = Duration.seconds(10)

    /// The HTTP layer's handler: decisions held here and every answer that needs no waiting on
    /// the event loop, the rest in a task; the server's refusals in its words; one access-log line
    /// and the metrics for every answer.
    static func handler(_ routes: DecisionRoutes, access: AccessRecorder) -> HTTPHandler {
        HTTPHandler(
            atOnce: { request in routes.respondAtOnce(to: request)?.http },
            work: .task { request in await routes.respond(to: request).http },
            refuse: ServerResponse.refusal,
            answered: access.record
        )
    }

    /// Stops the server on SIGTERM or SIGINT.
    ///
    /// No new connections; the requests in flight are finished within `grace`. Returns the
    /// sources, which must live as long as the server.
    static func stopOnSignals(_ server: HTTPServer, within grace: Duration) -> [any DispatchSourceSignal] {
        [SIGTERM, SIGINT].map { number in
            // Handled by the source, not by the default action (which ends the process at once).
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                log(
                    "stopping (\(number == SIGTERM ? "SIGTERM" : "SIGINT")): no new connections; finishing the requests in flight"
                )
                server.stop(within: grace)
            }
            source.resume()
            return source
        }
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
