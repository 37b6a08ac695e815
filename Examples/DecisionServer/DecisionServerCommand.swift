import AppStoreGroups
import Foundation
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
            fail("\(error.message)\n\n\(Configuration.usage)", status: 2)
        }
        if configuration.wantsHelp {
            say(Configuration.usage)
            exit(0)
        }

        let store: PolicyStore
        do {
            store = try PolicyStore(contentsOf: configuration.policies)
        } catch let error as GroupPolicyError {
            fail("\(error)\nthe policies in \(configuration.policies) do not load", status: 1)
        } catch {
            fail("\(error)", status: 1)
        }
        for warning in store.current.warnings { log("\(warning)") }

        var clients: [StoreEnvironment: AppStoreGroupsClient] = [:]
        for environment in StoreEnvironment.allCases {
            let target: AppStoreEnvironment =
                if let baseURL = configuration.baseURL {
                    .custom(baseURL: baseURL, storeEnvironment: environment)
                } else {
                    environment == .production ? .production : .sandbox
                }
            do {
                // A decision waits for this fetch: fail within seconds rather than Apple's 30.
                clients[environment] = try AppStoreGroupsClient(
                    environment: target,
                    credentials: configuration.credentials,
                    timeout: .seconds(10)
                )
            } catch {
                fail("\(error)", status: 2)
            }
        }

        let service = DecisionService(
            store: store,
            clients: clients,
            groups: ExpiringCache(timeToLive: configuration.cacheTTL, capacity: 100_000),
            members: ExpiringCache(timeToLive: configuration.cacheTTL, capacity: 10_000)
        )
        let server: HTTPServer
        do {
            server = try HTTPServer(
                host: configuration.host,
                port: configuration.port,
                limits: configuration.limits,
                handler: service.respond
            )
        } catch {
            fail(error.description, status: 2)
        }

        Task {
            await store.watch(every: configuration.reloadInterval) { outcome in
                switch outcome {
                case .reloaded(let generation): log("policies reloaded (generation \(generation))")
                case .failed(let error): log("policies not reloaded, the previous version keeps serving:\n\(error)")
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

    static func log(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func fail(_ message: String, status: Int32) -> Never {
        log("Error: \(message)")
        exit(status)
    }
}
