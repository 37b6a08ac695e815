// swift-tools-version:6.1
// An app's own package using GroupPolicy as an adopter would: a request handler on
// GroupDecisionService, constants from the TypedCapabilities plugin, the background work in a task
// group, and tests that need no key and no network (StaticGroupsSource, and the policy tests run
// through GroupPolicyTooling). CI builds and tests it; see Examples/README.md.
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "AppIntegration",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "GroupPolicy", path: "../..")],
    targets: [
        // The app's decisions: its policies (constants generated from them) and its handler.
        .target(
            name: "AppIntegration",
            dependencies: [
                .product(name: "GroupPolicy", package: "GroupPolicy"),
                .product(name: "AppStoreGroups", package: "GroupPolicy"),
                .product(name: "GroupDecisions", package: "GroupPolicy"),
            ],
            // Policy tests sit beside their policies; the plugin does not read them.
            exclude: ["Policies/team.tests.json"],
            swiftSettings: strictSettings,
            plugins: [.plugin(name: "TypedCapabilities", package: "GroupPolicy")]
        ),
        // The app as a process, driven on standard input: what its tests run to see it print nothing
        // on standard error and stop when told.
        .executableTarget(
            name: "app-integration-demo",
            dependencies: [
                "AppIntegration",
                .product(name: "GroupPolicy", package: "GroupPolicy"),
                .product(name: "AppStoreGroups", package: "GroupPolicy"),
                .product(name: "GroupDecisions", package: "GroupPolicy"),
                // It answers from memory (no key, no network), as a demo.
                .product(name: "GroupDecisionsTesting", package: "GroupPolicy"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "AppIntegrationTests",
            dependencies: [
                "AppIntegration",
                // Built with the tests, which run it as a process.
                "app-integration-demo",
                .product(name: "GroupPolicy", package: "GroupPolicy"),
                .product(name: "GroupPolicyTooling", package: "GroupPolicy"),
                .product(name: "AppStoreGroups", package: "GroupPolicy"),
                .product(name: "GroupDecisions", package: "GroupPolicy"),
                .product(name: "GroupDecisionsTesting", package: "GroupPolicy"),
            ],
            swiftSettings: strictSettings
        ),
    ]
)
