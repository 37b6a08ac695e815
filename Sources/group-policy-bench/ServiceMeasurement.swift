import AppStoreGroups
import Foundation
import GroupDecisions
import GroupPolicy

/// A figure of the decision service measured for each policy of the workload, printed as JSON or
/// text.
protocol ServiceCaseMeasurement {
    /// Measures the service with one policy over the workload's responses.
    static func measure(
        _ policyCase: Workload.PolicyCase,
        bodies: [[UInt8]],
        responses: [GetCustomerGroupsResponse],
        passes: Int
    ) throws(BenchError) -> Self
    /// One JSON object.
    var json: String { get }
    /// Lines for a reader.
    var text: String { get }
}

extension ServiceCaseMeasurement {
    /// Measures each policy of `workload` in turn and prints each figure as it comes.
    static func printEach(
        of workload: Workload,
        responses: [GetCustomerGroupsResponse],
        options: BenchOptions
    ) throws(BenchError) {
        for policyCase in workload.policies {
            let figure = try measure(
                policyCase,
                bodies: workload.responseBodies,
                responses: responses,
                passes: options.passes
            )
            print(options.json ? figure.json : figure.text)
        }
    }
}

extension ServiceMeasurement: ServiceCaseMeasurement {}
extension ShadowMeasurement: ServiceCaseMeasurement {}

/// The decision service's cache: the cost of a hit from the call to the Decision, and the memory a
/// cached customer takes.
///
/// Every response of the workload is one customer, fetched once from an in-process function (no
/// network, no token), then asked for again: each of those calls is a cache hit.
struct ServiceMeasurement {
    var rules: Int
    var customers: Int
    /// Nanoseconds per cache hit: median and 99th percentile.
    var hitMedian: Double
    var hitP99: Double
    /// Nanoseconds per `Policy.evaluate` of the same responses, timed one by one in the same
    /// order as the hits (so with the same cache warmth): a hit's median minus this one is what
    /// the service adds.
    var evaluateMedian: Double
    /// Heap bytes per cached customer, measured (malloc's in-use bytes before and after filling).
    var heapBytesPerCustomer: Double
    /// The cache's own estimate per customer (what its byte bound counts).
    var estimatedBytesPerCustomer: Double
    /// Median body size of Apple's answers in the workload.
    var medianAnswerBytes: Double

    static func measure(
        _ policyCase: Workload.PolicyCase,
        bodies: [[UInt8]],
        responses: [GetCustomerGroupsResponse],
        passes: Int
    ) throws(BenchError) -> ServiceMeasurement {
        let (service, directory) = try makeService(policyCase, bodies: bodies)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ids = (0..<responses.count).map { "c\($0)" }
        let result = blockingRun { () -> Result<ServiceMeasurement, BenchError> in
            MemoryProbe.trim()
            let heapBefore = MemoryProbe.heapInUse()
            for id in ids {
                guard (try? await service.decision(anyTransactionID: id, environment: .production)) != nil else {
                    return .failure(BenchError("customer \(id) was not served"))
                }
            }
            let heapAfter = MemoryProbe.heapInUse()
            var samples: [Double] = []
            samples.reserveCapacity(ids.count * passes)
            var evaluateSamples: [Double] = []
            evaluateSamples.reserveCapacity(ids.count * passes)
            let policy = service.policies.current
            let context = EvaluationContext(environment: .production)
            var sink = 0
            for _ in 0..<max(1, passes) {
                for response in responses {
                    let start = monotonicNanoseconds()
                    let decision = policy.evaluate(response, in: context)
                    evaluateSamples.append(Double(monotonicNanoseconds() - start))
                    sink &+= decision.capabilities.count
                }
                for id in ids {
                    let start = monotonicNanoseconds()
                    let served = try? await service.decision(anyTransactionID: id, environment: .production)
                    samples.append(Double(monotonicNanoseconds() - start))
                    guard let served, served.source == .cache else {
                        return .failure(BenchError("customer \(id) was not a cache hit"))
                    }
                    sink &+= served.decision.capabilities.count
                }
            }
            withExtendedLifetime(sink) {}
            let statistics = Statistics(samples)
            return .success(
                ServiceMeasurement(
                    rules: policyCase.rules,
                    customers: ids.count,
                    hitMedian: statistics.median,
                    hitP99: statistics.percentile(0.99),
                    evaluateMedian: Statistics(evaluateSamples).median,
                    heapBytesPerCustomer: Double(heapAfter - heapBefore) / Double(max(1, ids.count)),
                    estimatedBytesPerCustomer: Double(service.cachedBytes) / Double(max(1, ids.count)),
                    medianAnswerBytes: Statistics(bodies.map { Double($0.count) }).median
                )
            )
        }
        return try result.get()
    }

    /// A service over the policy whose fetches answer each body as customer `c<index>`, and the
    /// temporary directory its policy lives in (the caller removes it).
    static func makeService(
        _ policyCase: Workload.PolicyCase,
        bodies: [[UInt8]]
    ) throws(BenchError) -> (GroupDecisionService, String) {
        let directory = FileManager.default.temporaryDirectory.path + "/group-policy-bench-\(UUID().uuidString)"
        let policies: PolicyStore
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let path = directory + "/policy.json"
            try Data(policyCase.jsonBytes).write(to: URL(filePath: path))
            policies = try PolicyStore(contentsOf: path)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw BenchError("policy R=\(policyCase.rules) does not load into a store: \(error)")
        }
        let source = CopyingSource(
            answers: Dictionary(uniqueKeysWithValues: bodies.enumerated().map { ("c\($0.offset)", $0.element) })
        )
        var configuration = GroupDecisionService.Configuration()
        configuration.rateLimits.requestsPerSecond = [.production: 1e12, .sandbox: 1e12]
        configuration.localCache.capacityBytes = 1 << 40
        do {
            let service = try GroupDecisionService(policies: policies, source: source, configuration: configuration)
            return (service, directory)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw BenchError("the service does not start: \(error)")
        }
    }

    /// Fills the cache with every customer, then asks for them `iterations` times in turn, inside
    /// ``profileLoopService(_:ids:iterations:)``.
    ///
    /// Async calls return through tail calls, which callgrind's `--toggle-collect` loses track of:
    /// profile two whole runs of different `--iterations` and divide the difference instead.
    static func profile(_ policyCase: Workload.PolicyCase, bodies: [[UInt8]], iterations: Int) throws(BenchError) {
        let (service, directory) = try makeService(policyCase, bodies: bodies)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ids = (0..<bodies.count).map { "c\($0)" }
        let sink = blockingRun { () -> Int in
            for id in ids { _ = try? await service.decision(anyTransactionID: id, environment: .production) }
            return await profileLoopService(service, ids: ids, iterations: iterations)
        }
        print("service: \(iterations) cache hits over \(ids.count) customers, R=\(policyCase.rules) (\(sink))")
    }

    @inline(never)
    static func profileLoopService(_ service: GroupDecisionService, ids: [String], iterations: Int) async -> Int {
        var sink = 0
        var index = 0
        for _ in 0..<iterations {
            let served = try? await service.decision(anyTransactionID: ids[index], environment: .production)
            sink &+= served?.decision.capabilities.count ?? 0
            index += 1
            if index == ids.count { index = 0 }
        }
        return sink
    }

    var text: String {
        "service R=\(rules): cache hit median \(format(hitMedian)) ns, p99 \(format(hitP99)) ns "
            + "(evaluate alone, same order: median \(format(evaluateMedian)) ns); "
            + "a cached customer costs \(format(heapBytesPerCustomer)) heap bytes "
            + "(estimate \(format(estimatedBytesPerCustomer)), median answer \(format(medianAnswerBytes)) bytes)"
    }

    var json: String {
        "{\"rules\":\(rules),\"customers\":\(customers),\"service_cache_hit_median_ns\":\(Int(hitMedian.rounded())),"
            + "\"service_cache_hit_p99_ns\":\(Int(hitP99.rounded())),"
            + "\"service_evaluate_median_ns\":\(Int(evaluateMedian.rounded())),"
            + "\"service_cached_customer_heap_bytes\":\(Int(heapBytesPerCustomer.rounded())),"
            + "\"service_cached_customer_estimated_bytes\":\(Int(estimatedBytesPerCustomer.rounded()))}"
    }
}

/// Answers each body as customer `c<index>`, decoded from a copy of its own as a real fetch decodes
/// it (and, by the protocol's default, with the response's own JSON as its bytes), so the heap
/// figure counts what the cache keeps rather than storage shared with the workload.
private struct CopyingSource: GroupsSource {
    let answers: [String: [UInt8]]

    func customerGroups(
        anyTransactionID: String,
        environment: StoreEnvironment
    ) async throws(AppStoreGroupsError) -> GetCustomerGroupsResponse {
        guard let body = answers[anyTransactionID] else {
            throw AppStoreGroupsError(code: .transactionIDNotFound, message: "no such customer")
        }
        let copy = [UInt8](unsafeUninitializedCapacity: body.count) { buffer, count in
            count = buffer.initialize(from: body).1
        }
        do {
            return try GetCustomerGroupsResponse(jsonBytes: copy)
        } catch {
            throw AppStoreGroupsError(code: .invalidResponse, message: "\(error)")
        }
    }
}

/// Runs async work to completion from synchronous code, on a task of its own.
func blockingRun<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let semaphore = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task.detached {
        box.value = await body()
        semaphore.signal()
    }
    semaphore.wait()
    // The semaphore orders the write before this read.
    guard let value = box.value else { preconditionFailure("the task signalled without a value") }
    return value
}

private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
