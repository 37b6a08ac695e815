import Foundation
import GroupDecisionsTesting
import GroupPolicyBasics
import ServingTestSupport
import Testing

@testable import AppStoreGroups
@testable import GroupDecisions

/// The decision log: one record per decision, the id only as a salted SHA-256, and its JSON Lines file.
@Suite("Decision log")
struct DecisionLogTests {
    static let salt = Array("0123456789abcdef".utf8)

    @Test(
        "a record per decision served and refused, with the salted hash and never the id: the one the observer hears; without a log, none"
    )
    func records() async throws {
        let clock = ManualClock()
        let stub = StubGroupsSource(clock: clock.now)
        let path = FileManager.default.temporaryDirectory.path + "/decisions-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let log = try DecisionLog.jsonLines(path: path, salt: Self.salt)
        let service = try ServiceHarness(source: stub, clock: clock, decisionLog: log)
        let withoutLog = try ServiceHarness(source: stub, clock: clock)
        let live = try await service.decide("customer-secret-1")
        clock.advance(by: .milliseconds(1_500))
        let cached = try await service.decide("customer-secret-1")
        _ = try await withoutLog.decide("customer-secret-1")
        #expect(live.decisionID != cached.decisionID)
        stub.answer { _, _ in StubGroupsSource.internalError }
        _ = await expectError { try await service.decide("customer-secret-2") }
        // Records are written off the caller's task: wait for them.
        #expect(log.flush(within: .seconds(30)))
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let hash = "ffe4c82b690e235acd30e5cb3ed3cb242db0940e90b9532d6a4686d2bca88ec3"
        #expect(
            text.split(separator: "\n") == [
                #"{"time":"2027-01-15T08:00:00.000Z","decisionId":"\#(live.decisionID)","customer":"\#(hash)","environment":"Sandbox","policyRevision":"49c9b1f4e538bd3a","source":"live","fetchedAt":"2027-01-15T08:00:00.000Z","capabilities":["family.shared-lists","family.space"]}"#,
                #"{"time":"2027-01-15T08:00:01.500Z","decisionId":"\#(cached.decisionID)","customer":"\#(hash)","environment":"Sandbox","policyRevision":"49c9b1f4e538bd3a","source":"cache","fetchedAt":"2027-01-15T08:00:00.000Z","capabilities":["family.shared-lists","family.space"]}"#,
                #"{"time":"2027-01-15T08:00:01.500Z","customer":"\#(SHA256Hasher.hex(SHA256Hasher.hash(Self.salt + Array("customer-secret-2".utf8))))","environment":"Sandbox","policyRevision":"49c9b1f4e538bd3a","capabilities":[],"error":"general-internal-error"}"#,
            ]
        )
        #expect(!text.contains("customer-secret"))
        #expect(service.observer.records.map { $0.jsonLine + "\n" }.joined() == text)
        #expect(withoutLog.observer.records == [])
    }

    @Test("a decision log changes nothing the observer hears: failures, stale answers, 429s, refusals, invalidations")
    func observerHearsTheSameWithALog() async throws {
        func events(logged: Bool) async throws -> [String] {
            let clock = ManualClock()
            let retryAfter = clock.date.addingTimeInterval(1_000)
            let stub = StubGroupsSource(clock: clock.now)
            let cache = ScriptedGroupsCache(forwardsBudget: false, clock: clock)
            let harness = try ServiceHarness(
                source: stub,
                sharedCache: cache,
                clock: clock,
                decisionLog: logged ? try DecisionLog(salt: Self.salt) { _ in } : nil
            ) {
                $0.freshness.staleIfError = .seconds(600)
                $0.rateLimits.maximumRateLimitWait = .zero
            }
            _ = try await harness.decide("c1")
            stub.answer { _, _ in StubGroupsSource.internalError }
            clock.advance(by: .seconds(301))
            _ = try await harness.decide("c1")
            cache.failsEveryCall = true
            stub.answer { _, _ in StubGroupsSource.tooManyRequests(until: retryAfter) }
            _ = try? await harness.decide("c2")
            _ = try? await harness.decide("c4")
            _ = try? await harness.service.invalidate(anyTransactionID: "c1")
            cache.failsEveryCall = false
            clock.advance(by: .seconds(5))
            _ = try? await harness.decide("c3")
            return harness.observer.events
        }
        let plain = try await events(logged: false)
        #expect(try await events(logged: true) == plain)
        let failed =
            "shared cache failed: Redis at 127.0.0.1:6379 answered GET with an error: ERR unknown command 'GET', "
            + "with args beginning with: 'app:sandbox:groups:<customer>'"
        let tooManyRequests = [
            "fetch started: customer-groups", "fetch finished: customer-groups 429",
            "rate limited: customer-groups until 1800001000000 (asked 1800001000000)",
        ]
        let expected =
            [
                "cache miss", "fetch started: customer-groups", "fetch finished: customer-groups 200", "cache miss",
                "fetch started: customer-groups", "fetch finished: customer-groups 500",
                "stale served: general-internal-error (error, 301000 ms)", "cache miss", failed,
            ] + tooManyRequests + [
                "cache miss", "budget exhausted: customer-groups (Retry-After)", failed,
                "invalidated one, shared cache not updated", "cache miss", "shared cache recovered",
            ] + tooManyRequests
        #expect(plain == expected)
    }

    @Test("an unopenable file and a buffer under 4 KiB are refused with one line")
    func configuration() {
        let unopenable = #expect(throws: AppStoreGroupsError.self) {
            try DecisionLog.jsonLines(path: "/nonexistent-directory/decisions.jsonl", salt: Self.salt)
        }
        #expect(
            unopenable?.message
                == "cannot open the decision log /nonexistent-directory/decisions.jsonl: No such file or directory"
        )
        let small = #expect(throws: AppStoreGroupsError.self) {
            try DecisionLog.jsonLines(path: "/dev/null", salt: Self.salt, bufferBytes: 4095)
        }
        #expect(small?.message == "the decision log's buffer must be at least 4096 bytes, not 4095")
        #expect(throws: Never.self) { try DecisionLog.jsonLines(path: "/dev/null", salt: Self.salt, bufferBytes: 4096) }
    }

    @Test(
        "a salt needs 16 bytes and 8 distinct byte values: a repeated character, a short or a low-entropy one is refused",
        arguments: [
            ("0123456789abcdef", nil),
            ("abcdefghabcdefgh", nil),
            ("abcdefgabcdefgab", "the decision log's salt must have at least 8 distinct byte values, not 7: "),
            (
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
                "the decision log's salt must have at least 8 distinct byte values, not 1: "
            ),
            ("0123456789abcde", "the decision log's salt must be at least 16 bytes, not 15"),
            ("short", "the decision log's salt must be at least 16 bytes, not 5"),
        ] as [(String, String?)]
    )
    func saltRule(salt: String, refusal: String?) {
        let bytes = Array(salt.utf8)
        do {
            try DecisionLog.checkSalt(bytes)
            _ = try DecisionLog(salt: bytes) { _ in }
            #expect(refusal == nil, "accepted")
        } catch {
            #expect(error.code == .invalidConfiguration)
            #expect(refusal.map { error.message.hasPrefix($0) } == true, "\(error.message)")
        }
        let viaFile = Result { () throws(AppStoreGroupsError) in
            try DecisionLog.jsonLines(path: "/dev/null", salt: bytes)
        }
        #expect((try? viaFile.get()) == nil ? refusal != nil : refusal == nil)
    }

    /// A record whose line names `index`, so lines read back can be checked in order.
    static func record(_ index: Int) -> DecisionLogRecord {
        DecisionLogRecord(
            time: Date(timeIntervalSince1970: 1_800_000_000),
            customerHash: String(index),
            environment: "Sandbox",
            source: "cache",
            capabilities: ["family.space"]
        )
    }

    /// Everything `descriptor` yields until every writer has closed it, read on a thread of its own.
    static func readAll(_ descriptor: Int32) -> Task<[UInt8], any Error> {
        // The reading thread starts here, not from a task: the test then blocks its own thread in
        // `flush(within:)`, and under two busy loops a task waiting for a free thread of the
        // cooperative pool did not start within the flush's 30 seconds.
        let received = Locked<[UInt8]>([])
        let done = DispatchSemaphore(value: 0)
        Thread {
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    received.withLock { $0 += chunk[..<count] }
                } else if count == 0 || errno != EINTR {
                    break
                }
            }
            done.signal()
        }.start()
        return Task {
            try await offCooperativePool {
                done.wait()
                return received.withLock { $0 }
            }
        }
    }

    @Test(
        "a pipe nobody reads: recording never waits, and every record is written or reported dropped, exactly",
        .timeLimit(.minutes(2))
    )
    func pipeNobodyReads() async throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let reports = Locked<[DecisionLog.Loss]>([])
        var log: DecisionLog? = try DecisionLog.jsonLines(
            to: .descriptor(dup(ends[1]), owned: true),
            salt: Self.salt,
            bufferBytes: 4096
        ) { loss in reports.withLock { $0.append(loss) } }
        close(ends[1])
        // The pipe holds 64 KiB and the buffer 4 KiB: most of these are dropped, and no call waits
        // for the pipe (if one did, this loop would never end).
        for index in 0..<3000 { log?.record(Self.record(index)) }
        // The first loss is reported at once, while the pipe is still full.
        try await waitUntil { !reports.withLock(\.isEmpty) }
        for index in 3000..<4000 { log?.record(Self.record(index)) }
        // Reading starts; the log writes what it buffered, and once released reports the rest of
        // its losses and closes its end of the pipe.
        let reader = Self.readAll(ends[0])
        #expect(log?.flush(within: .seconds(30)) == true)
        log = nil
        let text = String(decoding: try await reader.value, as: UTF8.self)
        close(ends[0])
        let written = text.split(separator: "\n").map { line in
            line.firstRange(of: #""customer":""#).flatMap { start in
                Int(line[start.upperBound...].prefix { $0 != "\"" })
            } ?? -1
        }
        let lost = reports.withLock { $0 }
        // Exactly two reports: the first loss at once, the rest at release (the minute between reports had not passed).
        #expect(lost.count == 2)
        #expect(lost.allSatisfy { $0.failed == 0 && $0.lastError == nil })
        let dropped = lost.map(\.dropped).reduce(0, +)
        #expect(written.count + dropped == 4000)
        #expect(dropped > 0)
        #expect(written.count > 0)
        // Every line whole, in order, none twice.
        #expect(written == written.sorted())
        #expect(Set(written).count == written.count)
        #expect(!written.contains(-1))
        #expect(text.hasSuffix("\n"))
    }

    @Test("/dev/full: every record is reported as not written, with the reason", .timeLimit(.minutes(5)))
    func deviceFull() async throws {
        let reports = Locked<[DecisionLog.Loss]>([])
        var log: DecisionLog? = try DecisionLog.jsonLines(path: "/dev/full", salt: Self.salt) { loss in
            reports.withLock { $0.append(loss) }
        }
        for index in 0..<5 { log?.record(Self.record(index)) }
        #expect(log?.flush(within: .seconds(30)) == true)
        log = nil
        try await waitUntil { reports.withLock { $0.map(\.failed).reduce(0, +) } == 5 }
        let lost = reports.withLock { $0 }
        #expect(lost.map(\.dropped).reduce(0, +) == 0)
        #expect(lost.allSatisfy { $0.lastError == "No space left on device" })
    }

    @Test("rotation: after a rename or a delete, records go to a file at the path again")
    func reopensAfterRotation() throws {
        let directory = FileManager.default.temporaryDirectory.path + "/rotation-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/decisions.jsonl"
        // Checked before every write here; once a second by default.
        let log = try DecisionLog.jsonLines(
            to: .path(path),
            salt: Self.salt,
            bufferBytes: 1 << 20,
            reopenInterval: .zero
        ) { _ in }
        func write(_ index: Int) {
            log.record(Self.record(index))
            #expect(log.flush(within: .seconds(30)))
        }
        func customers(_ file: String) throws -> [String] {
            try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map { line in
                line.split(separator: ",").dropFirst().first.map(String.init) ?? String(line)
            }
        }
        write(1)
        write(2)
        // Renamed, as logrotate does: the next record creates the file again.
        try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
        write(3)
        // Renamed and replaced by a new file (logrotate's `create`): the next record goes to it.
        try FileManager.default.moveItem(atPath: path, toPath: path + ".2")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("{}\n".utf8)))
        write(4)
        try FileManager.default.moveItem(atPath: path, toPath: path + ".3")
        // Deleted: created again.
        write(5)
        try FileManager.default.removeItem(atPath: path)
        write(6)
        #expect(try customers(path + ".1") == [#""customer":"1""#, #""customer":"2""#])
        #expect(try customers(path + ".2") == [#""customer":"3""#])
        #expect(try String(contentsOfFile: path + ".3", encoding: .utf8).hasPrefix("{}\n{\"time\""))
        #expect(try customers(path + ".3").dropFirst() == [#""customer":"4""#])
        #expect(try customers(path) == [#""customer":"6""#])
    }

    @Test(
        "a FIFO: refused at once while nothing reads it; with a reader, records arrive; records while it is gone are reported as not written; a new reader gets the next",
        .timeLimit(.minutes(5))
    )
    func fifo() async throws {
        let path = FileManager.default.temporaryDirectory.path + "/decisions-\(UUID().uuidString).fifo"
        #expect(mkfifo(path, 0o600) == 0)
        defer { unlink(path) }
        let refusal = #expect(throws: AppStoreGroupsError.self) {
            try DecisionLog.jsonLines(path: path, salt: Self.salt)
        }
        #expect(refusal?.code == .invalidConfiguration)
        #expect(
            refusal?.message
                == "cannot open the decision log \(path): it is a FIFO and nothing reads it; start its reader first"
        )
        func readLine(_ reader: Int32) -> String {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            return String(decoding: chunk[..<max(count, 0)], as: UTF8.self)
        }
        let first = open(path, O_RDONLY | O_NONBLOCK)
        #expect(first >= 0)
        let reports = Locked<[DecisionLog.Loss]>([])
        var log: DecisionLog? = try DecisionLog.jsonLines(
            to: .path(path),
            salt: Self.salt,
            bufferBytes: 4096,
            reopenInterval: .zero
        ) { loss in reports.withLock { $0.append(loss) } }
        log?.record(Self.record(1))
        #expect(log?.flush(within: .seconds(30)) == true)
        #expect(readLine(first) == Self.record(1).jsonLine + "\n")
        close(first)
        // Nobody reads: the write fails with EPIPE (no SIGPIPE, which would end this process).
        log?.record(Self.record(2))
        #expect(log?.flush(within: .seconds(30)) == true)
        let second = open(path, O_RDONLY | O_NONBLOCK)
        defer { close(second) }
        log?.record(Self.record(3))
        #expect(log?.flush(within: .seconds(30)) == true)
        #expect(readLine(second) == Self.record(3).jsonLine + "\n")
        log = nil
        try await waitUntil { reports.withLock { $0.map(\.failed).reduce(0, +) } == 1 }
        #expect(reports.withLock { $0.map(\.lastError) } == ["Broken pipe"])
    }
}
