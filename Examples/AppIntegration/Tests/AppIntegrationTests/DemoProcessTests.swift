import Foundation
import Testing

/// The app as a process: a decision, a reload after a policy edit, a stop when told, and not a
/// byte on standard error.
@Suite("The app as a process")
struct DemoProcessTests {
    @Test("decides, reloads, stops on cancellation, and prints nothing to standard error")
    func silentProcess() throws {
        let directory = try PolicyFiles.copy()
        defer { try? FileManager.default.removeItem(at: directory) }
        let binary = try #require(
            Bundle.main.executableURL.map { $0.deletingLastPathComponent().appending(path: "app-integration-demo") }
                .flatMap { FileManager.default.isExecutableFile(atPath: $0.path) ? $0 : nil },
            "app-integration-demo is built with the tests, next to the test runner"
        )
        let process = Process()
        process.executableURL = binary
        process.arguments = [directory.path]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let lines = LineReader(output.fileHandleForReading)
        func ask(_ command: String) throws -> String {
            input.fileHandleForWriting.write(Data((command + "\n").utf8))
            return try #require(lines.next(), "no answer to \(command)")
        }
        let revision = try ask("revision")
        #expect(
            try ask("workspace admin1")
                == #"200 {"controls":["view","manage-seats"],"role":"admin","revision":"\#(revision)"}"#
        )
        let file = directory.appending(path: "team.json")
        let edited = try String(contentsOf: file, encoding: .utf8)
            .replacingOccurrences(of: #""role": "ADMIN""#, with: #""role": "NONE""#)
        try edited.write(to: file, atomically: true, encoding: .utf8)
        var reloaded = try ask("revision")
        for _ in 0..<500 where reloaded == revision {
            Thread.sleep(forTimeInterval: 0.02)
            reloaded = try ask("revision")
        }
        #expect(reloaded != revision)
        // The service caches Apple's answers, not decisions: the reloaded policy decides at once.
        let answer = try ask("workspace admin1")
        #expect(answer == #"200 {"controls":["view"],"role":"admin","revision":"\#(reloaded)"}"#)
        #expect(try ask("quit") == "cancelled")
        input.fileHandleForWriting.closeFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) == "")
    }
}

/// Lines read from a pipe as they come.
final class LineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []

    init(_ handle: FileHandle) {
        self.handle = handle
    }

    /// The next line, or `nil` at the end of the output.
    func next() -> String? {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeSubrange(...end)
                return line
            }
            let data = handle.availableData
            if data.isEmpty { return nil }
            buffer += data
        }
    }
}
