import Dispatch
import Foundation
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

/// The store where users deploy: a Kubernetes ConfigMap volume's link swap is seen, and readers
/// never wait for a reload's reading and compiling.
@Suite struct PolicyStoreDeploymentTests {
    static let anyGroup = PolicyStoreTests.anyGroup

    @Test func aConfigMapSwapOfItsDataLinkIsSeen() throws {
        let fileManager = FileManager.default
        let directory = try makeTemporaryDirectory("configmap")
        defer { try? fileManager.removeItem(atPath: directory) }
        // The layout kubelet writes: the files in a timestamped directory, `..data` linking to it,
        // and each key a link through `..data`.
        let first = "..2026_11_30_10_00_00.000000001"
        try fileManager.createDirectory(atPath: directory + "/" + first, withIntermediateDirectories: false)
        // The two versions have the same size and modification time: only the link tells them apart.
        let versionA = PolicyStoreTests.version(["a1", "a2"])
        let versionB = PolicyStoreTests.version(["b1", "b2"])
        #expect(versionA.utf8.count == versionB.utf8.count)
        let modified = Date(timeIntervalSince1970: 1_790_000_000)
        try Data(versionA.utf8).write(to: URL(fileURLWithPath: directory + "/" + first + "/team.json"))
        try fileManager.setAttributes(
            [.modificationDate: modified],
            ofItemAtPath: directory + "/" + first + "/team.json"
        )
        try fileManager.createSymbolicLink(atPath: directory + "/..data", withDestinationPath: first)
        try fileManager.createSymbolicLink(atPath: directory + "/team.json", withDestinationPath: "..data/team.json")

        let store = try PolicyStore(contentsOf: directory)
        #expect(store.capabilities(for: Self.anyGroup).names == ["a1", "a2"])
        #expect(store.reloadIfChanged() == nil)

        // kubelet's atomic update: a new timestamped directory, a new link renamed over `..data`.
        let second = "..2026_11_30_10_05_00.000000002"
        try fileManager.createDirectory(atPath: directory + "/" + second, withIntermediateDirectories: false)
        try Data(versionB.utf8).write(to: URL(fileURLWithPath: directory + "/" + second + "/team.json"))
        try fileManager.setAttributes(
            [.modificationDate: modified],
            ofItemAtPath: directory + "/" + second + "/team.json"
        )
        try fileManager.createSymbolicLink(atPath: directory + "/..data_tmp", withDestinationPath: second)
        #expect(rename(directory + "/..data_tmp", directory + "/..data") == 0)
        try fileManager.removeItem(atPath: directory + "/" + first)

        guard case .reloaded(let generation)? = store.reloadIfChanged() else {
            Issue.record("the swap was not seen: \(String(describing: store.lastFailure))")
            return
        }
        #expect(generation == 2)
        #expect(store.capabilities(for: Self.anyGroup).names == ["b1", "b2"])
        #expect(store.reloadIfChanged() == nil)
    }

    /// The reload is held inside its long work deterministically: its policy file is a FIFO, so it
    /// waits in `read` until the test writes the new version. (The store is given the file itself: a
    /// FIFO found in a directory is no policy file.)
    @Test func readersProceedWhileAReloadIsInItsLongWork() throws {
        let (directory, file) = try PolicyStoreTests.directory(with: PolicyStoreTests.versionA)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try PolicyStore(contentsOf: file)
        try FileManager.default.removeItem(atPath: file)
        #expect(mkfifo(file, 0o600) == 0)

        let outcome = Shared<Int?>(nil)
        let reloaded = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            if case .reloaded(let generation) = store.reload() {
                outcome.value.withLock { $0 = generation }
            }
            reloaded.signal()
        }
        // This open returns once the reload has opened the FIFO for reading: from here until the
        // write below, the reload is in progress.
        let writer = open(file, O_WRONLY)
        try #require(writer >= 0)

        let served = Shared<(names: [String], generation: Int)?>(nil)
        let readerDone = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let names = store.evaluate(Self.anyGroup).capabilities.names
            served.value.withLock { $0 = (names, store.generation) }
            readerDone.signal()
        }
        // Not a timing measurement: a reader that waited for the reload would wait until the write
        // below, which comes only after this bound (a minute, for a busy machine).
        #expect(readerDone.wait(timeout: .now() + 60) == .success, "a reader waited for the reload")
        let seen = served.value.withLock { $0 }
        #expect(seen?.names == ["a1", "a2"])
        #expect(seen?.generation == 1)

        let versionB = Array(PolicyStoreTests.versionB.utf8)
        #expect(versionB.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) } == versionB.count)
        close(writer)
        reloaded.wait()
        #expect(outcome.value.withLock { $0 } == 2)
        #expect(store.capabilities(for: Self.anyGroup).names == ["b1", "b2", "b3"])
    }
}
