import CMallocInfo
import Foundation
import GroupPolicy

/// Monotonic time in nanoseconds (`CLOCK_MONOTONIC`, a vDSO call of about 20 ns on Linux).
@inline(__always)
func monotonicNanoseconds() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
}

/// The median cost of reading the clock twice back to back, in nanoseconds.
func clockOverheadNanoseconds() -> Double {
    var samples: [Double] = []
    for _ in 0..<10_001 {
        let start = monotonicNanoseconds()
        let end = monotonicNanoseconds()
        samples.append(Double(end - start))
    }
    return Statistics(samples).median
}

/// Order statistics of a list of samples (nearest-rank percentiles).
struct Statistics {
    let sorted: [Double]

    init(_ samples: [Double]) {
        sorted = samples.sorted()
    }

    func percentile(_ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    var median: Double {
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    var p99: Double { percentile(0.99) }
    var minimum: Double { sorted.first ?? .nan }
    var maximum: Double { sorted.last ?? .nan }
}

/// Times `operation(i)` for each `i` in `0..<count`, each as a batch of `repetitions` back-to-back
/// calls, over `passes` passes; one sample per (pass, i) = batch time / repetitions.
///
/// Batching keeps the two clock reads (about 20 ns together) a small share of each sample while
/// still giving one sample per input, so the median and p99 are over inputs, not over averages.
func timePerInput(
    count: Int,
    repetitions: Int,
    passes: Int,
    _ operation: (Int) -> Int
) -> (samples: [Double], sink: Int) {
    var samples: [Double] = []
    samples.reserveCapacity(count * passes)
    var sink = 0
    for _ in 0..<passes {
        for index in 0..<count {
            let start = monotonicNanoseconds()
            for _ in 0..<repetitions { sink &+= operation(index) }
            let end = monotonicNanoseconds()
            samples.append(Double(end - start) / Double(repetitions))
        }
    }
    return (samples, sink)
}

/// Times one pass over every input, each once, in order: the throughput figure.
func timePass(count: Int, _ operation: (Int) -> Int) -> (nanoseconds: Double, sink: Int) {
    var sink = 0
    let start = monotonicNanoseconds()
    for index in 0..<count { sink &+= operation(index) }
    let end = monotonicNanoseconds()
    return (Double(end - start), sink)
}

// MARK: Memory

/// Process memory figures from `/proc/self/status` and glibc's allocator.
enum MemoryProbe {
    /// A field of `/proc/self/status` in MiB (`VmHWM`: peak resident set; `VmRSS`: current).
    static func status(_ field: String) -> Double? {
        guard let file = fopen("/proc/self/status", "r") else { return nil }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 512)
        while fgets(&buffer, Int32(buffer.count), file) != nil {
            let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard line.hasPrefix(field + ":") else { continue }
            let digits = line.dropFirst(field.count + 1).filter { $0.isNumber }
            return Double(String(digits)).map { $0 / 1024 }
        }
        return nil
    }

    /// Resets the peak resident set (`VmHWM`) to the current one; false where the kernel refuses.
    static func resetPeak() -> Bool {
        guard let file = fopen("/proc/self/clear_refs", "w") else { return false }
        defer { fclose(file) }
        return fputs("5", file) >= 0 && fflush(file) == 0
    }

    /// Bytes allocated and not freed right now (glibc `mallinfo2()`: the arenas and mapped blocks).
    static func heapInUse() -> Int {
        Int(group_policy_heap_in_use())
    }

    /// Returns free heap memory to the system, so the next resident-set figures start low.
    static func trim() {
        group_policy_heap_trim()
    }
}

/// Loads a policy `count` times (at least once), timing each load in milliseconds.
///
/// The last policy is kept, the others released before the next load. A load that fails is
/// `failure` with the error appended.
func timedLoads(
    _ count: Int,
    failure: String,
    _ load: () throws(GroupPolicyError) -> Policy
) throws(BenchError) -> (policy: Policy, milliseconds: [Double]) {
    var milliseconds: [Double] = []
    var loaded: Policy?
    for _ in 0..<max(count, 1) {
        loaded = nil
        let start = monotonicNanoseconds()
        do {
            loaded = try load()
        } catch {
            throw BenchError("\(failure): \(error)")
        }
        milliseconds.append(Double(monotonicNanoseconds() - start) / 1e6)
    }
    guard let policy = loaded else { throw BenchError("no policy loaded") }
    return (policy, milliseconds)
}
