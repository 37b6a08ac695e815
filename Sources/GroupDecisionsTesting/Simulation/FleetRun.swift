import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy
import Synchronization

/// One run of a ``FleetSimulation``: the services, the App Store, the store and its faults, and the
/// driver that plays the script's steps and moves the clock.
///
/// The driver moves the simulation's clock only when every task has gone as far as it can: it lets
/// the other tasks run until none has read the clock or slept for a few turns, waits (in real time)
/// for calls to a store across a network, and then moves the clock to the earliest sleep's
/// deadline. A task still busy when the clock moves is a process that paused, which a real fleet
/// has too: the promises must hold then as well.
package final class FleetRun: Sendable {
    /// What one run found, and what happened in it.
    package struct Report: Sendable {
        /// The violations, as ``FleetSimulation/run(seed:)`` returns them.
        package var violations: [FleetSimulation.Violation]
        /// Decisions, requests to Apple and invalidations.
        package var tally: PromiseOracle.Tally
    }

    private let simulation: FleetSimulation
    private let seed: UInt64
    private let clock: SimulationClock
    private let oracle: PromiseOracle
    private let appStore: SimulatedAppStore
    private let store: FleetSimulation.Store.Instance
    private let faults: [FaultyCache.Fault]
    private let services: [GroupDecisionService]
    private let names: [String]
    /// When the run began, on its clock.
    private let start: Date
    private let script: Mutex<FleetScript>
    /// Invalidations that could not complete through any service, tried again at the next step
    /// (as Apple sends a notification again until the app's handler answers it).
    private let pending = Mutex<[SimulationStep.Invalidation]>([])

    /// The longest one step may take in real time before the run gives up.
    static let stepTimeLimit = Duration.seconds(60)

    private init(
        simulation: FleetSimulation,
        seed: UInt64,
        clock: SimulationClock,
        oracle: PromiseOracle,
        appStore: SimulatedAppStore,
        store: FleetSimulation.Store.Instance,
        faults: [FaultyCache.Fault],
        services: [GroupDecisionService],
        names: [String],
        script: FleetScript
    ) {
        self.simulation = simulation
        self.seed = seed
        self.clock = clock
        self.oracle = oracle
        self.appStore = appStore
        self.store = store
        self.faults = faults
        self.services = services
        self.names = names
        self.start = clock.now()
        self.script = Mutex(script)
    }

    /// Plays one run of `simulation` from `seed`.
    static func play(_ simulation: FleetSimulation, seed: UInt64) async throws -> Report {
        let followsWallClock = simulation.store.clock != .simulation
        let clock = SimulationClock(
            start: followsWallClock ? Date() : Date(timeIntervalSince1970: 1_800_000_000),
            followsWallClock: followsWallClock
        )
        var random = SimulationRandom(seed: seed)
        let world = SimulatedWorld(customers: simulation.customers, random: &random)
        let names = (0..<world.count).map { world[$0].id }
        let store = try await simulation.store.make { clock.now() }
        do {
            let configuration = simulation.configuration
            let share = configuration.rateLimits.fallbackShare
            let keepsBudget = store.caches.fleetBudget != nil
            let multiple = keepsBudget ? 1 + Double(simulation.services) * share : Double(simulation.services)
            let oracle = PromiseOracle(
                seed: seed,
                clock: clock,
                names: names,
                configuration: configuration,
                budgetMultiple: multiple
            )
            var budget: [StoreEnvironment: (rate: Double, burst: Double)] = [:]
            for environment in StoreEnvironment.allCases {
                let (rate, burst) = oracle.budget(environment)
                // Apple's limit is twice what the fleet is configured to spend: Apple's 429s would
                // otherwise hide a fleet that overspends (the gate closes after the first).
                budget[environment] = (2 * rate / multiple, 2 * burst / multiple)
            }
            let appStore = SimulatedAppStore(
                world: world,
                seed: seed,
                behaviour: simulation.appStore,
                budget: budget,
                clock: clock,
                oracle: oracle
            )
            var faults: [FaultyCache.Fault] = []
            var caches: [SharedCaches] = []
            for index in 0..<simulation.services {
                let instance = index == 0 ? store.caches : try await store.makeAnotherInstance?() ?? store.caches
                let fault = FaultyCache.Fault(random: SimulationRandom(seed: seed, stream: 10 + UInt64(index)))
                faults.append(fault)
                caches.append(
                    FaultyCache.caches(instance, fromOneStore: store.fromOneStore, clock: clock, fault: fault)
                )
            }
            let policies = try SimulationPolicy.store()
            let services = try caches.map { cache in
                try GroupDecisionService(
                    policies: policies,
                    source: appStore,
                    sharedCaches: cache,
                    configuration: configuration,
                    timeSource: clock.timeSource
                )
            }
            let run = FleetRun(
                simulation: simulation,
                seed: seed,
                clock: clock,
                oracle: oracle,
                appStore: appStore,
                store: store,
                faults: faults,
                services: services,
                names: names,
                script: FleetScript(
                    seed: seed,
                    services: simulation.services,
                    faults: simulation.faults.intersection(Self.supported(by: store))
                )
            )
            let report = try await run.play()
            await store.close?()
            return report
        } catch {
            await store.close?()
            throw error
        }
    }

    /// The faults a store instance can suffer (the services' and Apple's always).
    private static func supported(by store: FleetSimulation.Store.Instance) -> Set<FleetSimulation.Fault> {
        var faults: Set<FleetSimulation.Fault> = [
            .cutOff, .slowCache, .flappingCache, .rateLimitStorm, .slowAnswers, .droppedAnswers,
        ]
        if store.flush != nil { faults.insert(.flush) }
        if store.restart != nil { faults.insert(.restart) }
        if store.loseBudget != nil || store.loseInvalidationCount != nil || store.loseAnswer != nil {
            faults.insert(.evictedKey)
        }
        return faults
    }

    // MARK: Steps

    private func play() async throws -> Report {
        let services = services
        let background = Task {
            await withTaskGroup(of: Void.self) { group in
                for service in services { group.addTask { try? await service.run() } }
            }
        }
        defer { background.cancel() }
        for step in 1...simulation.steps {
            // A step's turn on the cooperative threads ends here: a process that runs simulations
            // beside other work (a test suite) keeps answering it.
            await Task.yield()
            let planned = script.withLock { $0.next(appStore.world) }
            oracle.begin(step: step, description: planned.description(names))
            trace("step \(step): \(planned.description(names))")
            let retries = pending.withLock { pending in
                defer { pending.removeAll() }
                return pending
            }
            if !retries.isEmpty {
                try await perform(
                    step: step,
                    retries.map { invalidation in { await self.invalidate(invalidation, through: 0) } }
                )
            }
            try await execute(planned, step: step)
        }
        background.cancel()
        let finished = Countdown(1)
        let waiter = Task {
            await background.value
            finished.done()
        }
        try await drive(step: simulation.steps) { finished.isFinished }
        await waiter.value
        return Report(violations: oracle.violations, tally: oracle.tally)
    }

    private func execute(_ step: SimulationStep, step index: Int) async throws {
        switch step {
        case .requests(let requests):
            try await perform(step: index, requests.map { request in { await self.decide(request) } })
        case .change(let change, let invalidation, let service, let during, let after):
            let random = SimulationRandom(seed: seed, stream: 3 &+ UInt64(index))
            let invalidating: @Sendable () async -> Void = {
                // The change comes while the decisions during it are under way: a request that
                // reached Apple before it may answer after the invalidation.
                if !during.isEmpty {
                    var random = random
                    try? await self.clock.sleep(for: random.duration(0.001...0.2))
                }
                _ = self.appStore.apply(change)
                await self.invalidate(invalidation, through: service)
                // Decisions begun once it returned: no service may serve them the answers it removed.
                await self.concurrently(after.map { request in { await self.decide(request) } })
            }
            try await perform(step: index, [invalidating] + during.map { request in { await self.decide(request) } })
        case .invalidation(let invalidation, let service):
            try await perform(step: index, [{ await self.invalidate(invalidation, through: service) }])
        case .pause(let duration):
            try await pass(duration, step: index)
        case .fault(let fault, let before, let after) where !before.isEmpty || !after.isEmpty:
            let random = SimulationRandom(seed: seed, stream: 3 &+ UInt64(index))
            let striking: @Sendable () async -> Void = {
                // Once the decisions before it have asked for their tokens.
                var random = random
                try? await self.clock.sleep(for: random.duration(0.001...0.3))
                await self.strike(fault)
                await self.concurrently(after.map { request in { await self.decide(request) } })
            }
            try await perform(step: index, [striking] + before.map { request in { await self.decide(request) } })
        case .fault(let fault, _, _):
            await strike(fault)
            // Whatever the fault set off runs before the next step.
            try await drive(step: index) { true }
        }
    }

    private func decide(_ request: SimulationStep.Request) async {
        let ticket = oracle.decisionBegins()
        do {
            let served = try await services[request.service].decision(
                anyTransactionID: names[request.customer],
                environment: request.environment
            )
            oracle.served(served, to: request, ticket: ticket)
            trace(
                "  service \(request.service + 1) \(names[request.customer]) \(request.environment): "
                    + "\(AnswerMarker(in: served.groups)?.groupID ?? "?") \(served.source)"
            )
        } catch {
            oracle.refused(error, to: request, ticket: ticket)
            trace("  service \(request.service + 1) \(names[request.customer]) \(request.environment): \(error.code)")
        }
    }

    /// The app's invalidation: through `service`, else through each other service in turn (a
    /// notification handler that failed is called again), else left for the next step.
    private func invalidate(_ invalidation: SimulationStep.Invalidation, through service: Int) async {
        let ticket = oracle.invalidationBegins(invalidation, world: appStore.world)
        for index in [service] + services.indices.filter({ $0 != service }) {
            do {
                let service = services[index]
                switch invalidation {
                case .customer(let customer): try await service.invalidate(anyTransactionID: names[customer])
                case .group(let group): try await service.invalidate(groupID: group)
                case .all: try await service.invalidateAll()
                }
                oracle.invalidationReturned(ticket)
                trace("  invalidation of \(invalidation.description(names)) returned through service \(index + 1)")
                return
            } catch {
                oracle.invalidationFailed()
                trace("  invalidation of \(invalidation.description(names)) failed through service \(index + 1)")
            }
        }
        pending.withLock { $0.append(invalidation) }
    }

    private func trace(_ line: @autoclosure () -> String) {
        guard let trace = simulation.trace else { return }
        let time = PromiseOracle.format(clock.shown.timeIntervalSince(start))
        trace("\(time) " + line())
    }

    /// Applies a fault; a store that could not suffer it (restarting, unreachable) carries on.
    private func strike(_ fault: SimulationStep.Fault) async {
        do {
            try await apply(fault)
        } catch {
            trace("  the fault could not be applied: \(error)")
        }
    }

    private func apply(_ fault: SimulationStep.Fault) async throws {
        switch fault {
        case .cutOff(let service, let timesOut): faults[service].mode = .cutOff(timesOut: timesOut)
        case .slowCache(let service): faults[service].mode = .slow
        case .flappingCache(let service): faults[service].mode = .flapping
        case .heal(let service): faults[service].mode = .healthy
        case .flush:
            guard let flush = store.flush else { return }
            oracle.budgetLost()
            try await flush()
        case .restart:
            guard let restart = store.restart else { return }
            oracle.budgetLost()
            try await restart()
        case .loseBudget:
            guard let loseBudget = store.loseBudget else { return }
            oracle.budgetLost()
            try await loseBudget()
        case .loseInvalidationCount:
            try await store.loseInvalidationCount?()
        case .loseAnswer(let customer, let environment):
            try await store.loseAnswer?(names[customer], environment)
        case .rateLimitStorm(let on): appStore.set(storm: on)
        case .slowAnswers(let on): appStore.set(slow: on)
        case .droppedAnswers(let on): appStore.set(dropping: on)
        }
    }

    // MARK: The driver

    /// Runs `operations` at once, moving the clock until every one has finished.
    private func perform(step: Int, _ operations: [@Sendable () async -> Void]) async throws {
        let left = Countdown(operations.count)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for operation in operations {
                group.addTask {
                    await operation()
                    left.done()
                }
            }
            do {
                try await drive(step: step) { left.isFinished }
            } catch {
                group.cancelAll()
                throw error
            }
            try await group.waitForAll()
        }
    }

    /// Runs `operations` at once from inside an operation (the driver already moves the clock).
    private func concurrently(_ operations: [@Sendable () async -> Void]) async {
        await withTaskGroup(of: Void.self) { group in
            for operation in operations { group.addTask { await operation() } }
        }
    }

    /// Lets `duration` pass: every sleep due meanwhile wakes at its deadline, in order.
    private func pass(_ duration: Duration, step: Int) async throws {
        let target = clock.shown.addingTimeInterval(duration.seconds)
        // No decision is under way: every deadline before the target is moved to at once.
        try await drive(step: step, eagerly: true) {
            guard let next = self.clock.earliestDeadline, next <= target else { return true }
            return false
        }
        clock.advance(to: target)
        try await drive(step: step) { true }
    }

    /// Moves the clock, sleep by sleep, until `done` (asked once the tasks have settled).
    ///
    /// A deadline within ``horizon`` (the longest a decision or an invalidation sleeps) is moved to
    /// as soon as the tasks have settled; a later one (the services' sweeps) only `eagerly` (while
    /// the clock passes with no decision under way) or once nothing has read the clock for a few
    /// milliseconds of real time, since a task still busy (serving a decision reads the clock only
    /// at its start) would otherwise see the clock jump by seconds.
    private func drive(step: Int, eagerly: Bool = false, until done: () -> Bool) async throws {
        let started = ContinuousClock.now
        var lastActivity = clock.activity
        var quietSince = ContinuousClock.now
        while true {
            await settle()
            clock.wakeDue()
            if done() { return }
            let now = ContinuousClock.now
            if now - started > Self.stepTimeLimit {
                throw AppStoreGroupsError(
                    code: .timeout,
                    message: "fleet simulation seed \(seed): step \(step) did not finish within "
                        + "\(Self.stepTimeLimit.components.seconds) s of real time"
                )
            }
            let activity = clock.activity
            if activity != lastActivity {
                lastActivity = activity
                quietSince = now
            }
            if !clock.callsAreInFlight, let next = clock.earliestDeadline,
                eagerly || next.timeIntervalSince(clock.shown) <= horizon || now - quietSince > .milliseconds(5)
            {
                clock.advance(to: next)
            } else {
                // A call to the store under way, or a task that runs without reading the clock.
                try? await Task.sleep(for: .microseconds(100))
            }
        }
    }

    /// The longest a decision, an invalidation or the App Store sleeps in one go, in seconds.
    private var horizon: Double {
        let configuration = simulation.configuration
        let waits = [
            configuration.sharedCache.fetchLockWait.seconds + configuration.sharedCache.fetchLockPollInterval.seconds,
            configuration.rateLimits.maximumRateLimitWait.seconds,
            configuration.sharedCache.invalidationCheckInterval.seconds,
        ]
        // The App Store's slowest answer takes 3 s.
        return waits.reduce(3, max) + 0.5
    }

    /// Returns once no task has read the clock or slept over a few turns, and no call to the store
    /// is under way.
    ///
    /// The last quiet turn also waits for the global concurrent executor to run what was queued on
    /// it: a service's unstructured tasks (a single flight's fetch) keep no task executor preference,
    /// so when the run has one (a test's own thread) they wait there behind other work while the
    /// driver's turns on its own executor come round at once; moving the clock then pauses them by
    /// seconds, and a token they took before the pause is spent after it beside the refilled budget.
    private func settle() async {
        var last = clock.activity
        var quiet = 0
        var turns = 0
        while quiet < 3, turns < 10_000 {
            turns += 1
            await Task.yield()
            if quiet == 2 {
                await Task.detached(priority: Task.currentPriority) {}.value
                await Task.detached(priority: Task.currentPriority) {}.value
            }
            if clock.callsAreInFlight {
                await clock.callsFinished()
                quiet = 0
                last = clock.activity
                continue
            }
            let now = clock.activity
            if now == last {
                quiet += 1
            } else {
                quiet = 0
                last = now
            }
        }
    }
}

/// How many of a set of tasks have yet to finish.
private final class Countdown: Sendable {
    private let left: Mutex<Int>

    init(_ count: Int) {
        left = Mutex(count)
    }

    func done() { left.withLock { $0 -= 1 } }

    var isFinished: Bool { left.withLock { $0 <= 0 } }
}
