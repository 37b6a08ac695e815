import ArgumentParsing
import Foundation
import GroupDecisions
import GroupDecisionsRedis
import GroupDecisionsTesting

/// `group-decisions-simulation`: runs `FleetSimulation` over a range of seeds and prints every
/// violation, then `N seeds, V violations`.
@main
enum SimulationCommand {
    /// Exit statuses: distinct for each way a run can end.
    enum Status: Int32 {
        case noViolation = 0
        case violations = 1
        case badArguments = 2
        case couldNotRun = 3
    }

    static func main() async {
        let options: SimulationOptions
        do {
            guard let parsed = try SimulationOptions.parse(Array(CommandLine.arguments.dropFirst())) else { exit(0) }
            options = parsed
        } catch {
            standardError(error.description)
            exit(Status.badArguments.rawValue)
        }
        exit(await run(options).rawValue)
    }

    static func run(_ options: SimulationOptions) async -> Status {
        var simulation = FleetSimulation(
            services: options.services,
            customers: options.customers,
            steps: options.steps,
            configuration: options.revocationStorm
                ? FleetSimulation.revocationStormConfiguration : FleetSimulation.defaultConfiguration,
            appStore: options.revocationStorm ? FleetSimulation.revocationStormAppStore : FleetSimulation.AppStore(),
            faults: options.revocationStorm ? options.faults.subtracting(storeFaults) : options.faults,
            store: store(options)
        )
        if options.trace { simulation.trace = { standardError($0) } }
        var violations = 0
        let started = ContinuousClock.now
        for offset in 0..<options.seeds {
            let seed = options.firstSeed + UInt64(offset)
            let report: FleetRun.Report
            do {
                report = try await simulation.report(seed: seed)
            } catch {
                standardError("Error: seed \(seed): \(error)")
                print("\(offset) seeds, \(violations) violations")
                return .couldNotRun
            }
            for violation in report.violations { print(violation) }
            violations += report.violations.count
            if options.verbose { standardError("seed \(seed): \(summary(report))") }
        }
        if options.verbose {
            let seconds = (ContinuousClock.now - started).seconds
            standardError("\(options.seeds) seeds in \(String(format: "%.1f", seconds)) s")
        }
        print("\(options.seeds) seeds, \(violations) violations")
        return violations > 0 ? .violations : .noViolation
    }

    /// The store faults, which the revocation storm leaves out.
    static let storeFaults: Set<FleetSimulation.Fault> = [.flush, .evictedKey, .restart]

    static func store(_ options: SimulationOptions) -> FleetSimulation.Store {
        if let (host, port) = options.redis { return RedisStore.store(host: host, port: port) }
        switch options.cache {
        case .inMemory: return .inMemory
        case .wallClock: return .cache { InMemoryGroupsCache() }
        }
    }

    static func summary(_ report: FleetRun.Report) -> String {
        let tally = report.tally
        let served = tally.served.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        let refused = tally.refused.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        return "served \(served.isEmpty ? "none" : served); refused \(refused.isEmpty ? "none" : refused); "
            + "\(tally.appleRequests) requests to Apple; \(tally.invalidations) invalidations "
            + "(\(tally.failedInvalidations) attempts failed); \(report.violations.count) violations"
    }

    static func standardError(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
