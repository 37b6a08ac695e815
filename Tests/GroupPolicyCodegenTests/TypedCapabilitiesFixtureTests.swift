import Foundation
import Testing

/// Builds Tests/Fixtures/TypedCapabilitiesFixture, an app package that applies the TypedCapabilities
/// plugin, with `swift build` as a separate process, offline (the package is a local path
/// dependency).
///
/// A cold build compiles the engine again for the fixture (about a minute on two busy cores), so
/// these tests run only when `GROUP_POLICY_FIXTURE_TESTS=1`; `.ci/run` runs them as their own step.
/// Later runs reuse `.build/fixtures/typed-capabilities` and take seconds.
@Suite(
    .serialized,
    .enabled(
        if: ProcessInfo.processInfo.environment["GROUP_POLICY_FIXTURE_TESTS"] == "1",
        "builds a fixture package with the plugin (about a minute cold): set GROUP_POLICY_FIXTURE_TESTS=1"
    ),
    .timeLimit(.minutes(10))
)
struct TypedCapabilitiesFixtureTests {
    static let packageRoot = URL(filePath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fixture = packageRoot.appending(path: "Tests/Fixtures/TypedCapabilitiesFixture")
    static let scratch = packageRoot.appending(path: ".build/fixtures/typed-capabilities")

    @Test func theAppBuildsWithoutWarningsAndUsesTheGeneratedConstants() throws {
        let build = try Self.swiftBuild(["--product", "FixtureApp"])
        #expect(build.status == 0, "\(build.output)")
        #expect(!build.output.contains("warning:"), "\(build.output)")
        #expect(build.output.contains("Generating capability and workspace constants for FixtureApp"))
        #expect(build.output.contains("Generating capability and workspace constants for SharedPolicies"))

        let run = try Self.run(Self.scratch.appending(path: "debug/FixtureApp"), [], in: Self.fixture)
        #expect(run.status == 0)
        #expect(
            run.output == """
                workspaceView workspace.view true
                workspaceManageSeats workspace.manage-seats true
                ssoConfigure SSO.configure true
                default default true
                teamTemplates team.templates false
                teamSpace team-space 7 admin
                billingViewInvoices billing.view-invoices true

                """
        )
    }

    @Test func aMisspeltCapabilityDoesNotCompile() throws {
        let build = try Self.swiftBuild(["--target", "MisspeltCapability"])
        #expect(build.status != 0)
        let source = "Sources/MisspeltCapability/main.swift"
        // `allows` takes a Capability or a String, so the compiler words the first error by overload.
        #expect(build.output.contains("\(source):6:24: error: "), "\(build.output)")
        #expect(
            build.output.contains("\(source):7:26: error: type 'Capability' has no member 'workspaceManageSeat'"),
            "\(build.output)"
        )
        let errors = build.output.split(separator: "\n").filter { $0.contains("\(source):") && $0.contains("error:") }
        #expect(errors.allSatisfy { $0.contains("'workspaceManageSeat'") }, "\(errors)")
    }

    @Test func aPolicyThatDoesNotLoadFailsTheBuildWithTheLoadersDiagnostic() throws {
        let build = try Self.swiftBuild(["--target", "BrokenPolicy"])
        #expect(build.status != 0)
        #expect(
            build.output.contains(
                "Sources/BrokenPolicy/team.json:14:40: error: rules[1].capabilities[0]: undeclared capability "
                    + "'workspace.manage-seat' (did you mean 'workspace.manage-seats'?)"
            ),
            "\(build.output)"
        )
        #expect(!build.output.contains("main.swift"), "the build must stop before compiling the sources")
    }

    /// The package command prints what the CLI prints, offline.
    ///
    /// `swift package group-policy …` in the app's package runs the CLI through the GroupPolicyCommand
    /// plugin, with paths relative to the package. Offline: the dependency is a local path,
    /// resolution is off, and any HTTP(S) request would hit a closed port.
    @Test func thePackageCommandPrintsTheCLIsReportOffline() throws {
        for arguments in [["check", "Sources/FixtureApp/Policies"], ["test", "Sources/FixtureApp/Policies"]] {
            let cli = try Self.run(Self.cli, arguments, in: Self.fixture)
            let plugin = try Self.swiftPackageCommand(arguments)
            #expect(cli.status == 0, "\(cli)")
            #expect(cli.standardError == "")
            #expect(plugin.status == 0, "\(plugin)")
            #expect(plugin.standardOutput == cli.standardOutput, "\(arguments)")
        }
        let check = try Self.run(Self.cli, ["check", "Sources/FixtureApp/Policies"], in: Self.fixture)
        #expect(
            check.standardOutput
                == "checked 1 policy, 1 test file: 0 errors, 0 warnings, 0 invariants hold\npolicy revision e89f526bab932084\n"
        )
    }

    /// A failing check fails the package command too, with the CLI's diagnostics.
    ///
    /// SwiftPM puts what the plugin's process writes to standard error on its own standard output,
    /// and ends with status 1 whatever the CLI's status was, naming that status on standard error.
    @Test func aFailingCheckFailsThePackageCommandWithTheCLIsDiagnostics() throws {
        let arguments = ["check", "Sources/BrokenPolicy/team.json"]
        let cli = try Self.run(Self.cli, arguments, in: Self.fixture)
        let plugin = try Self.swiftPackageCommand(arguments)
        #expect(cli.status == 1)
        #expect(
            cli.standardError
                == "Sources/BrokenPolicy/team.json:14:40: error: rules[1].capabilities[0]: undeclared capability "
                + "'workspace.manage-seat' (did you mean 'workspace.manage-seats'?)\n"
        )
        #expect(plugin.status == 1)
        for line in (cli.standardOutput + cli.standardError).split(separator: "\n") {
            #expect(plugin.standardOutput.contains(line + "\n"), "\(plugin)")
        }
        #expect(plugin.standardError.hasSuffix("error: Plugin ended with exit code 1\n"), "\(plugin)")
    }

    /// The `group-policy` executable built beside the tests.
    static let cli: URL = {
        let products = URL(filePath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [
            products.appending(path: "group-policy"),
            products.deletingLastPathComponent().appending(path: "group-policy"),
            packageRoot.appending(path: ".build/debug/group-policy"),
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[2]
    }()

    /// `swift package group-policy ARGUMENTS` in the fixture, with resolution off and HTTP(S)
    /// proxies pointing at a closed loopback port.
    static func swiftPackageCommand(_ arguments: [String]) throws -> Output {
        var environment = ProcessInfo.processInfo.environment
        for variable in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"] {
            environment[variable] = "http://127.0.0.1:9"
        }
        return try run(
            URL(filePath: "/usr/bin/env"),
            [
                // The same flags as the builds above, so the shared scratch directory stays incremental.
                "swift", "package", "--package-path", fixture.path, "--scratch-path", scratch.path,
                "-Xswiftc", "-warnings-as-errors", "--disable-automatic-resolution", "group-policy",
            ] + arguments,
            in: fixture,
            environment: environment
        )
    }

    struct Output: CustomStringConvertible {
        var status: Int32
        var standardOutput: String
        var standardError: String
        /// Both streams, for checks that do not care which one a line is on.
        var output: String { standardOutput + standardError }
        var description: String { "status \(status)\n\(standardOutput)\n\(standardError)" }
    }

    /// Runs a program to its end in `directory`, standard output and error apart.
    static func run(
        _ executable: URL,
        _ arguments: [String],
        in directory: URL,
        environment: [String: String]? = nil
    ) throws -> Output {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        if let environment { process.environment = environment }
        // Standard error goes to a file, so that neither stream can fill a pipe and stall the child.
        let errorFile = FileManager.default.temporaryDirectory.appending(path: "fixture-\(UUID().uuidString).err")
        guard FileManager.default.createFile(atPath: errorFile.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        defer { try? FileManager.default.removeItem(at: errorFile) }
        let err = try FileHandle(forWritingTo: errorFile)
        let out = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let outputData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try err.close()
        let errorData = try Data(contentsOf: errorFile)
        return Output(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self)
        )
    }

    /// `swift build` of the fixture with warnings as errors (the same flags every time, so builds
    /// after the first are incremental).
    static func swiftBuild(_ arguments: [String]) throws -> Output {
        try run(
            URL(filePath: "/usr/bin/env"),
            [
                "swift", "build", "--package-path", fixture.path, "--scratch-path", scratch.path,
                "-Xswiftc", "-warnings-as-errors",
            ] + arguments,
            in: fixture
        )
    }
}
