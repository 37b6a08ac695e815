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

        let run = try Self.run(Self.scratch.appending(path: "debug/FixtureApp"), [])
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

    struct Result {
        var status: Int32
        var output: String
    }

    /// `swift build` of the fixture with warnings as errors (the same flags every time, so builds
    /// after the first are incremental).
    static func swiftBuild(_ arguments: [String]) throws -> Result {
        try run(
            URL(filePath: "/usr/bin/env"),
            [
                "swift", "build", "--package-path", fixture.path, "--scratch-path", scratch.path,
                "-Xswiftc", "-warnings-as-errors",
            ] + arguments
        )
    }

    /// Runs a program to its end, standard output and error together.
    static func run(_ executable: URL, _ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, output: String(decoding: output, as: UTF8.self))
    }
}
