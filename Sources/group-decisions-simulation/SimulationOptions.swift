import ArgumentParsing
import GroupDecisions
import GroupDecisionsTesting

/// The command line of `group-decisions-simulation`.
struct SimulationOptions {
    /// Which store the services share.
    enum Cache: String, CaseIterable {
        /// `FleetSimulation.Store.inMemory`: on the simulation's clock, flushed, restarted and robbed of
        /// keys by the simulation.
        case inMemory = "in-memory"
        /// `InMemoryGroupsCache()` as an adopter's own cache: on the wall clock, no store faults.
        case wallClock = "wall-clock"
    }

    var firstSeed: UInt64 = 1
    var seeds = 1
    var services = 3
    var customers = 8
    var steps = 200
    var cache = Cache.inMemory
    var redis: (host: String, port: Int)?
    var revocationStorm = false
    var faults: Set<FleetSimulation.Fault> = FleetSimulation.Fault.all
    var verbose = false
    var trace = false

    static let spec = CommandSpec(
        "group-decisions-simulation",
        summary: "group-decisions-simulation: runs the seeded fleet simulation and prints every promise it saw broken.",
        options: [
            .init("seeds", value: "n", help: "How many seeds to run, one after another (default 1)."),
            .init("seed", value: "s", help: "The first seed (default 1): seeds s to s + n - 1 run."),
            .init("services", value: "k", help: "Services sharing the store (default 3)."),
            .init("customers", value: "n", help: "Customers of the simulated App Store (default 8)."),
            .init("steps", value: "n", help: "Steps per seed (default 200)."),
            .init(
                "cache",
                value: "kind",
                help: "in-memory (default: on the simulation's clock, with store faults) or wall-clock "
                    + "(InMemoryGroupsCache() as a cache of your own)."
            ),
            .init(
                "redis",
                value: "host:port",
                help: "RedisGroupsCache on this server instead (a fresh key prefix per seed)."
            ),
            .init("faults", value: "list", help: "Only these faults (comma-separated; see below), or 'none'."),
            .flag("revocation-storm", help: "The revocation storm (see below)."),
            .flag("verbose", help: "One line per seed with what happened in it, on standard error."),
            .flag("trace", help: "Every step, decision and invalidation, on standard error (for replaying a seed)."),
        ],
        details: """
            Each seed plays one run: the services share the store, a simulated App Store answers with Apple's
            budget, customers change groups and the app invalidates them, faults come and go, and after every
            step the four promises are checked (invalidation, budget, maximum-age, own-answer). Every broken
            promise prints one line naming the seed and the step; the last line is 'N seeds, V violations'.
            Exit status: 0 no violation, 1 violations, 2 bad arguments, 3 the simulation could not run (a
            store that cannot be reached).

            --faults takes: \(FleetSimulation.Fault.all.map(\.name).sorted().joined(separator: ", ")).
            With --redis, the store's faults are key deletions of the seed's own prefix (its flush deletes
            every key under the prefix; no restart): the server's other keys are never touched.

            --revocation-storm: Apple answers a third of the requests 429 and drops one in ten connections at
            all times; answers live 1 s, are never refreshed ahead and may be served stale for an hour; the
            store's faults are left out, so what it finds comes from the storm and the invalidations.
            """
    )

    /// The options, or `nil` when the command line asks for help (printed already).
    static func parse(_ arguments: [String]) throws(UsageError) -> SimulationOptions? {
        let parsed: ParsedArguments
        switch try spec.parse(arguments) {
        case .help(let text):
            print(text, terminator: "")
            return nil
        case .run(let arguments):
            parsed = arguments
        }
        func number(_ name: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int? {
            guard let text = parsed.value(name) else { return nil }
            guard let number = Int(text), range.contains(number) else {
                throw parsed.usageError(
                    "--\(name) needs a whole number from \(range.lowerBound) to \(range.upperBound), not '\(text)'"
                )
            }
            return number
        }
        var options = SimulationOptions()
        options.seeds = try number("seeds", 1...100_000_000) ?? options.seeds
        if let text = parsed.value("seed") {
            guard let seed = UInt64(text) else {
                throw parsed.usageError("--seed needs a whole number from 0 to \(UInt64.max), not '\(text)'")
            }
            guard seed <= UInt64.max - UInt64(options.seeds - 1) else {
                throw parsed.usageError("--seed \(text) with --seeds \(options.seeds) goes past \(UInt64.max)")
            }
            options.firstSeed = seed
        }
        options.services = try number("services", 1...64) ?? options.services
        options.customers = try number("customers", 2...1_000) ?? options.customers
        options.steps = try number("steps", 1...1_000_000) ?? options.steps
        if let text = parsed.value("cache") {
            guard let cache = Cache(rawValue: text) else {
                throw parsed.usageError("--cache takes in-memory or wall-clock, not '\(text)'")
            }
            options.cache = cache
        }
        if let text = parsed.value("redis") {
            guard parsed.value("cache") == nil else {
                throw parsed.usageError("--redis and --cache exclude each other")
            }
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                (1...65_535).contains(port), colon > text.startIndex
            else {
                throw parsed.usageError("--redis needs host:port with a port from 1 to 65535, not '\(text)'")
            }
            options.redis = (String(text[..<colon]), port)
        }
        if let text = parsed.value("faults") {
            options.faults = []
            if text != "none" {
                for name in text.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let fault = FleetSimulation.Fault.all.first(where: { $0.name == name }) else {
                        let names = FleetSimulation.Fault.all.map(\.name).sorted().joined(separator: ", ")
                        throw parsed.usageError("--faults takes none or names from \(names), not '\(name)'")
                    }
                    options.faults.insert(fault)
                }
            }
        }
        options.revocationStorm = parsed.has("revocation-storm")
        options.verbose = parsed.has("verbose")
        options.trace = parsed.has("trace")
        return options
    }
}
