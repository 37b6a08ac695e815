// swift-tools-version:6.1
// An app package that uses GroupPolicy's TypedCapabilities plugin and its `swift package group-policy`
// command, built and run by
// Tests/GroupPolicyCodegenTests/TypedCapabilitiesFixtureTests.swift. Only FixtureApp builds:
// MisspeltCapability and BrokenPolicy are meant to fail, so build one product or target at a time.
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// An executable target that generates constants from the policy files in its directory.
func app(_ name: String, exclude: [String] = [], dependencies: [Target.Dependency] = []) -> Target {
    .executableTarget(
        name: name,
        dependencies: [.product(name: "GroupPolicy", package: "GroupPolicy")] + dependencies,
        // Policy tests sit beside their policies; the plugin does not read them, so SwiftPM must
        // be told they are not sources.
        exclude: exclude,
        swiftSettings: strictSettings,
        plugins: [.plugin(name: "TypedCapabilities", package: "GroupPolicy")]
    )
}

let package = Package(
    name: "TypedCapabilitiesFixture",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "GroupPolicy", path: "../../..")],
    targets: [
        app("FixtureApp", exclude: ["Policies/team.tests.json"], dependencies: ["SharedPolicies"]),
        // A library: the constants it generates are public, so FixtureApp can use them too.
        .target(
            name: "SharedPolicies",
            dependencies: [.product(name: "GroupPolicy", package: "GroupPolicy")],
            swiftSettings: strictSettings,
            plugins: [.plugin(name: "TypedCapabilities", package: "GroupPolicy")]
        ),
        app("MisspeltCapability"),
        app("BrokenPolicy"),
    ]
)
