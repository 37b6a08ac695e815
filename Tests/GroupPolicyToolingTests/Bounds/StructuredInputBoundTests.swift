import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy
@testable import GroupPolicyTooling

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Large structured inputs cost bounded work: loading, checking and diffing policies that name
/// thousands of values per match, or thousands of group ids, finish within 10 s and 1 GB (debug
/// builds included), or are refused at once with a limit error naming the dimension.
///
/// The bounds are generous on purpose: the inputs used to take minutes and gigabytes, so a
/// regression shows as a failure here rather than as a slow CI run.
@Suite(.cpuBound) struct StructuredInputBoundTests {
    static let seconds: Double = 10
    static let bytes = 1 << 30

    /// One rule whose match names 200 group types, 200 roles and 2,000 products: its dense table
    /// would hold 80 million cells.
    @Test func aMatchNamingThousandsOfValuesCompilesInBoundedWork() throws {
        let json = Self.wideRule(types: 200, roles: 200, products: 2000)
        let (loaded, cost) = try Self.measure { try Policy(jsonBytes: Array(json.utf8), fileName: "wide.json") }
        #expect(cost.seconds < Self.seconds)
        #expect(cost.peakGrowth < Self.bytes)
        #expect(loaded.compiled.documents.map(\.hasDenseRoleTables) == [false])

        let named = try response(
            """
            {"groups":[{"groupId":"g","groupType":"T7","roles":[{"productId":"p1999","role":"R3"}]}]}
            """
        )
        let unnamed = try response(
            """
            {"groups":[{"groupId":"g","groupType":"T7","roles":[{"productId":"other","role":"R3"}]}]}
            """
        )
        #expect(loaded.capabilities(for: named).names == ["a"])
        #expect(loaded.evaluate(named).capabilities.names == ["a"])
        #expect(loaded.capabilities(for: unnamed).names == [])
        #expect(loaded.evaluate(unnamed).capabilities.names == [])
    }

    /// 100 invariants over a space of 300,000 role entries share one index per environment.
    ///
    /// 100,000 products are named by one rule. Before, each built
    /// its own index over the whole space (0.4 s per invariant in a release build, 420 s for 999).
    @Test func manyInvariantsOverALargeSpaceShareItsIndex() throws {
        let products = (0..<100_000).map { "\"p\($0)\"" }.joined(separator: ",")
        let invariants = (0..<100).map { index in
            #"{ "id": "i\#(index)", "never": { "capabilities": ["b"], "match": { "productId": "p\#(index)", "role": "NONE" } } }"#
        }
        let json = """
            { "format": "group-policy/v1", "id": "space", "capabilities": { "a": "a", "b": "b" },
              "rules": [ { "id": "r", "capabilities": ["a"], "match": { "productId": [\(products)], "role": "ADMIN" } } ],
              "invariants": [\(invariants.joined(separator: ","))] }
            """
        let loaded = try policy(json)
        let (results, cost) = Self.measure { loaded.checkInvariants() }
        #expect(cost.seconds < Self.seconds)
        #expect(results.count == 100)
        #expect(results.allSatisfy { $0.status == .holds })
    }

    /// 3,000 rules that each name a distinct group id: the invariant holds and a policy diffed with
    /// itself changes nothing, each within the bound (both took seconds per thousand rules).
    @Test func rulesNamingThousandsOfGroupIDsCheckAndDiffQuickly() throws {
        let loaded = try policy(Self.groupIDRules(count: 3000))
        let (results, checkCost) = Self.measure { loaded.checkInvariants() }
        #expect(checkCost.seconds < Self.seconds)
        #expect(results.map(\.status) == [.holds])
        // Per environment: 3 group types (ORGANIZATION, CONSUMER, the unnamed one) times 3,001 ids
        // (3,002 in Sandbox with the placeholder), one entry-less scenario each.
        #expect(results.first?.scenarioCount == 3 * 3001 + 3 * 3002)

        let (diff, diffCost) = try Self.measure { try PolicyDiff(from: loaded, to: loaded) }
        #expect(diffCost.seconds < Self.seconds)
        #expect(diff.rows.count == 0)
    }

    /// A policy over the rule limit is refused before it is compiled, naming the limit.
    @Test func aPolicyOverTheRuleLimitIsRefusedAtOnce() throws {
        let json = Self.groupIDRules(count: 3000)
        let (error, cost) = Self.measure {
            #expect(throws: GroupPolicyError.self) {
                try Policy(jsonBytes: Array(json.utf8), fileName: "many.json", limits: PolicyLimits(maximumRules: 1000))
            }
        }
        #expect(cost.seconds < Self.seconds)
        #expect("\(error.map { "\($0)" } ?? "")".contains("over the limit of 1000"))
    }

    /// "Did you mean" suggestions share one budget per document.
    ///
    /// 20,000 misspelt names among 1,000 long declared ones each sorted the names and measured the
    /// edit distance to every one (100,000 among 10,000 ran for hours); now the first suggestion
    /// spends the budget, and the rest are plain errors.
    @Test func suggestionsForManyMisspeltNamesShareOneBudget() throws {
        let long = String(repeating: "x", count: 100)
        let capabilities = (0..<1000).map { "cap.\(long).\($0)" }
        let rules = (0..<20_000).map { #"{"id":"r\#($0)","capabilities":["cbp.\#(long).\#($0 % 1000)"]}"# }
        let (error, cost) = Self.measure {
            #expect(throws: GroupPolicyError.self) {
                try policy(capabilities: capabilities, rules: "[" + rules.joined(separator: ",") + "]")
            }
        }
        #expect(cost.seconds < Self.seconds)
        let messages = error?.diagnostics.filter { $0.severity == .error }.map(\.message) ?? []
        // A hundred errors of the kind are listed, then how many more there are.
        #expect(messages.count == 101)
        #expect(messages.first == "undeclared capability 'cbp.\(long).0' (did you mean 'cap.\(long).0'?)")
        #expect(messages[99] == "undeclared capability 'cbp.\(long).99'")
        #expect(messages.filter { $0.contains("did you mean") }.count == 1)
    }

    /// A diff refuses entitlement sets that hold too many entitlements together, at once.
    ///
    /// 150 grants and 150 denies of one capability, each requiring 450 entitlements of its own,
    /// make 22,650 sets, far within the set limit, but each pair's union copies 900 entitlements:
    /// at 1,000 rules a side that was a million unions, over 20 s and gigabytes.
    @Test func entitlementSetsHoldingTooManyEntitlementsAreRefused() throws {
        func rule(_ kind: String, _ index: Int) -> String {
            let entitlements = (0..<450).map { "\"\(kind)\(index).\($0)\"" }.joined(separator: ",")
            let effect = kind == "d" ? #""effect":"deny","# : ""
            return #"{"id":"\#(kind)\#(index)",\#(effect)"capabilities":["a"],"#
                + #""match":{"productId":"p","role":"ADMIN"},"requires":{"entitlements":[\#(entitlements)]}}"#
        }
        let rules = (0..<150).map { rule("g", $0) } + (0..<150).map { rule("d", $0) }
        let loaded = try policy(capabilities: ["a"], rules: "[" + rules.joined(separator: ",") + "]")
        let (error, cost) = Self.measure {
            #expect(throws: GroupPolicyError.self) { try PolicyDiff(from: loaded, to: loaded) }
        }
        #expect(cost.seconds < Self.seconds)
        #expect(error?.code == .limitExceeded)
        #expect(
            error?.message
                == "the diff's entitlement sets hold more than 10000000 entitlements together, "
                + "over the limit of 10000000"
        )
    }

    // MARK: Inputs

    static func wideRule(types: Int, roles: Int, products: Int) -> String {
        func list(_ prefix: String, _ count: Int) -> String {
            "[" + (0..<count).map { "\"\(prefix)\($0)\"" }.joined(separator: ",") + "]"
        }
        return """
            { "format": "group-policy/v1", "id": "wide", "capabilities": { "a": "A", "b": "B" },
              "rules": [ { "id": "r", "match": { "groupType": \(list("T", types)), "role": \(list("R", roles)),
                "productId": \(list("p", products)) }, "capabilities": ["a"] } ] }
            """
    }

    static func groupIDRules(count: Int) -> String {
        let rules = (0..<count).map { #"{"id":"r\#($0)","match":{"groupId":"g\#($0)"},"capabilities":["a"]}"# }
        return """
            { "format": "group-policy/v1", "id": "ids", "capabilities": { "a": "A", "b": "B" },
              "rules": [\(rules.joined(separator: ","))],
              "invariants": [ { "id": "never-b", "never": { "capabilities": ["b"] } } ] }
            """
    }

    // MARK: Measuring

    struct Cost {
        /// The CPU time of the thread that did the work: the bound is on the work, which the
        /// wall clock overstates when other tests and builds share the machine (two cores with a
        /// load of ten stretched a 6 s check past 10 s).
        var seconds: Double
        /// The process's peak resident memory afterwards less its resident memory before.
        var peakGrowth: Int
    }

    static func measure<T>(_ body: () throws -> T) rethrows -> (T, Cost) {
        let before = residentBytes()
        let start = threadCPUSeconds()
        let value = try body()
        let seconds = threadCPUSeconds() - start
        return (value, Cost(seconds: seconds, peakGrowth: max(0, peakResidentBytes() - before)))
    }

    /// The calling thread's CPU time, in seconds.
    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Resident memory from `/proc/self/statm` (its second field, in pages); 0 where unavailable.
    static func residentBytes() -> Int {
        let fields = procFile("/proc/self/statm").split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * pageSize
    }

    /// The peak resident memory (`VmHWM` of `/proc/self/status`); 0 where unavailable.
    static func peakResidentBytes() -> Int {
        for line in procFile("/proc/self/status").split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let digits = line.filter(\.isNumber)
            return (Int(String(digits)) ?? 0) * 1024
        }
        return 0
    }

    static var pageSize: Int {
        #if canImport(Glibc)
        Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        4096
        #endif
    }

    /// A small file of `/proc` (whose size reads as 0, so it is read to its end).
    static func procFile(_ path: String) -> String {
        #if canImport(Glibc)
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return "" }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 16 {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
        #else
        return ""
        #endif
    }
}
