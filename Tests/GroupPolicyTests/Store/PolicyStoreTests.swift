import Foundation
import GroupPolicyTestSupport
import Synchronization
import Testing

@testable import GroupPolicy

/// The reloading store: complete validation before the swap, the old version serving on failure,
/// and readers that never see a mix (also run under the thread sanitizer in CI).
@Suite struct PolicyStoreTests {
    /// A policy version that grants exactly `capabilities` to every group.
    static func version(_ capabilities: [String]) -> String {
        let declarations = capabilities.map { "\"\($0)\": \"\($0)\"" }.joined(separator: ", ")
        let names = capabilities.map { "\"\($0)\"" }.joined(separator: ", ")
        return """
            { "format": "group-policy/v1", "id": "v", "capabilities": { \(declarations) },
              "rules": [ { "id": "all", "capabilities": [\(names)] } ] }
            """
    }

    static let versionA = version(["a1", "a2"])
    static let versionB = version(["b1", "b2", "b3"])
    static let broken =
        #"{ "format": "group-policy/v1", "id": "v", "capabilities": { "x": "x" }, "rules": [ { "id": "r", "capabilities": ["y"] } ] }"#
    static let anyGroup = GetCustomerGroupsResponse(groups: [GroupEntry(groupID: "1", groupType: .consumer)])

    /// A fresh temporary directory holding `policy.json`.
    static func directory(with contents: String) throws -> (directory: String, file: String) {
        let directory = try makeTemporaryDirectory("policy-store")
        let file = directory + "/policy.json"
        try write(contents, to: file)
        return (directory, file)
    }

    static func write(_ contents: String, to file: String) throws {
        // Write-then-rename, the way deploy tools replace files, so a reader never sees half a file.
        let temporary = file + ".tmp-\(UUID().uuidString)"
        try Data(contents.utf8).write(to: URL(fileURLWithPath: temporary))
        guard rename(temporary, file) == 0 else { throw StoreTestError.renameFailed(errno) }
    }

    @Test func reloadSwapsInAValidVersionAndKeepsTheOldOneOnFailure() throws {
        let (directory, file) = try Self.directory(with: Self.versionA)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try PolicyStore(contentsOf: directory)
        #expect(store.generation == 1)
        #expect(store.capabilities(for: Self.anyGroup).names == ["a1", "a2"])

        try Self.write(Self.versionB, to: file)
        guard case .reloaded(let generation) = store.reload() else {
            Issue.record("reload failed: \(String(describing: store.lastFailure))")
            return
        }
        #expect(generation == 2)
        #expect(store.evaluate(Self.anyGroup).capabilities.names == ["b1", "b2", "b3"])

        try Self.write(Self.broken, to: file)
        guard case .failed(let failure) = store.reload() else {
            Issue.record("a broken policy reloaded")
            return
        }
        #expect(failure.code == .invalidPolicy)
        #expect(failure.diagnostics.map(\.message) == ["undeclared capability 'y'"])
        #expect(store.lastFailure?.code == .invalidPolicy)
        #expect(store.generation == 2)
        #expect(store.capabilities(for: Self.anyGroup).names == ["b1", "b2", "b3"])

        try Self.write(Self.versionA, to: file)
        #expect(store.reloadIfChanged() != nil)
        #expect(store.lastFailure == nil)
        #expect(store.generation == 3)
        #expect(store.reloadIfChanged() == nil)
    }

    @Test func aStoreNeverStartsWithoutAPolicy() throws {
        let (directory, _) = try Self.directory(with: Self.broken)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(throws: GroupPolicyError.self) { try PolicyStore(contentsOf: directory) }
    }

    @Test func aDeletedPolicyFileFailsTheReloadAndKeepsServing() throws {
        let (directory, file) = try Self.directory(with: Self.versionA)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try PolicyStore(contentsOf: file)
        try FileManager.default.removeItem(atPath: file)
        guard case .failed(let failure) = store.reload() else {
            Issue.record("reloaded a missing file")
            return
        }
        #expect(failure.code == .unreadableFile)
        #expect(store.capabilities(for: Self.anyGroup).names == ["a1", "a2"])
    }

    /// Readers evaluate continuously while versions A, B and a broken one are swapped in: every
    /// decision is exactly A's or B's, never a mix and never the broken one.
    @Test func concurrentReadersNeverSeeAMix() async throws {
        let (directory, file) = try Self.directory(with: Self.versionA)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try PolicyStore(contentsOf: directory)
        let done = Shared(false)
        let versionA = ["a1", "a2"]
        let versionB = ["b1", "b2", "b3"]
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var decisions = 0
                    while !done.value.withLock({ $0 }) {
                        let names = store.capabilities(for: Self.anyGroup).names
                        let full = store.evaluate(Self.anyGroup)
                        if names != versionA && names != versionB { throw StoreTestError.mixed(names) }
                        if full.capabilities.names != full.groups[0].capabilities.names {
                            throw StoreTestError.mixed(full.capabilities.names)
                        }
                        decisions += 1
                        // The cooperative pool may have as few threads as cores: let the writer run.
                        await Task.yield()
                    }
                    return decisions
                }
            }
            group.addTask {
                for round in 0..<60 {
                    let contents = [Self.versionA, Self.versionB, Self.broken][round % 3]
                    try Self.write(contents, to: file)
                    _ = store.reload()
                }
                done.value.withLock { $0 = true }
                return 0
            }
            var total = 0
            for try await count in group { total += count }
            #expect(total > 0)
        }
        #expect(store.generation == 41)
    }

    @Test func runReloadsWhenTheFilesChange() async throws {
        let (directory, file) = try Self.directory(with: Self.versionA)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try PolicyStore(contentsOf: directory, reloadInterval: .milliseconds(10))
        let outcomes = Shared<[String]>([])
        store.addReloadHandler { outcome, _ in
            switch outcome {
            case .reloaded(let generation): outcomes.value.withLock { $0.append("reloaded \(generation)") }
            case .failed(let error): outcomes.value.withLock { $0.append("failed \(error.code)") }
            }
        }
        let runner = Task { try await store.run() }
        try Self.write(Self.versionB, to: file)
        for _ in 0..<500 where store.generation < 2 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(store.capabilities(for: Self.anyGroup).names == ["b1", "b2", "b3"])
        try Self.write(Self.broken, to: file)
        for _ in 0..<500 where store.lastFailure == nil { try await Task.sleep(for: .milliseconds(10)) }
        runner.cancel()
        await #expect(throws: CancellationError.self) { try await runner.value }
        #expect(outcomes.value.withLock { $0 } == ["reloaded 2", "failed invalid-policy"])
        #expect(store.capabilities(for: Self.anyGroup).names == ["b1", "b2", "b3"])
    }
}

enum StoreTestError: Error {
    case mixed([String])
    case renameFailed(Int32)
}

/// A value shared between tasks of a test.
final class Shared<Value: Sendable>: Sendable {
    let value: Mutex<Value>

    init(_ value: Value) {
        self.value = Mutex(value)
    }
}
