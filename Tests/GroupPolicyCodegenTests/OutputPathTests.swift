import Foundation
import GroupPolicy
import Testing

@testable import GroupPolicyCodegen

/// Where the generated file goes: the write replaces the file the path names, so it must never
/// replace something that is not a file (`--output /dev/null` run as root turned the device into a
/// regular file), and it writes through a symbolic link instead of replacing the link.
struct OutputPathTests {
    static func output(in directory: TemporaryDirectory) throws -> SwiftConstantsGenerator.Output {
        let file = try directory.write(
            "p.json",
            SwiftConstantsGeneratorTests.policy(id: "p", capabilities: ["a"])
        )
        return try SwiftConstantsGenerator().generate(policyFiles: [file])
    }

    @Test func aFIFOIsRefusedAndLeftAFIFO() throws {
        let directory = try TemporaryDirectory()
        let output = try Self.output(in: directory)
        let fifo = directory.path("Constants.swift")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: SwiftConstantsGenerator.OutputPathError(description: "\(fifo) is a FIFO, not a file")) {
            try output.write(to: fifo)
        }
        var info = stat()
        #expect(stat(fifo, &info) == 0)
        #expect(Int(info.st_mode) & Int(S_IFMT) == Int(S_IFIFO))
    }

    @Test func aDirectoryIsRefused() throws {
        let directory = try TemporaryDirectory()
        let output = try Self.output(in: directory)
        let target = directory.path("Constants.swift")
        try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: false)
        #expect(throws: SwiftConstantsGenerator.OutputPathError(description: "\(target) is a directory, not a file")) {
            try output.write(to: target)
        }
    }

    @Test func aSymbolicLinkIsWrittenThroughAndStaysALink() throws {
        let directory = try TemporaryDirectory()
        let output = try Self.output(in: directory)
        try FileManager.default.createDirectory(atPath: directory.path("real"), withIntermediateDirectories: false)
        let real = directory.path("real/Constants.swift")
        try "old".write(toFile: real, atomically: false, encoding: .utf8)
        let link = directory.path("Constants.swift")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "real/Constants.swift")
        try output.write(to: link)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == "real/Constants.swift")
        #expect(try String(contentsOfFile: real, encoding: .utf8) == output.source)
    }
}
