// swift-tools-version:6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "GroupPolicy",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "GroupPolicy", targets: ["GroupPolicy"]),
        .library(name: "GroupPolicyTooling", targets: ["GroupPolicyTooling"]),
        .library(name: "AppStoreGroups", targets: ["AppStoreGroups"]),
        .library(name: "GroupDecisions", targets: ["GroupDecisions"]),
        .library(name: "GroupDecisionsRedis", targets: ["GroupDecisionsRedis"]),
        .library(name: "GroupDecisionsTesting", targets: ["GroupDecisionsTesting"]),
        .executable(name: "group-policy", targets: ["group-policy"]),
        .executable(name: "group-decision-server", targets: ["group-decision-server"]),
        .executable(name: "group-decisions-simulation", targets: ["group-decisions-simulation"]),
        .plugin(name: "TypedCapabilities", targets: ["TypedCapabilities"]),
        .plugin(name: "GroupPolicyCommand", targets: ["GroupPolicyCommand"]),
    ],
    targets: [
        // The basics every module of the package shares, none of them tied to the runtime's public
        // types (not a product): the JSON tree and the one JSON writer and string escaping,
        // timestamps, "did you mean" suggestions, exact string comparison, one-line escaping, the
        // lock, saturating arithmetic and file status. Everything in it is `package`.
        .target(
            name: "GroupPolicyBasics",
            swiftSettings: strictSettings
        ),
        // The runtime: what an app server links to load policies and evaluate decisions.
        .target(
            name: "GroupPolicy",
            dependencies: ["GroupPolicyBasics"],
            swiftSettings: strictSettings
        ),
        // What authors and CI link: scenarios, invariants, diff, policy tests and the check report.
        // It uses the runtime's internals through `package` access.
        .target(
            name: "GroupPolicyTooling",
            dependencies: ["GroupPolicyBasics", "GroupPolicy"],
            swiftSettings: strictSettings
        ),
        // The command-line parser shared by the tools and the decision server (not a product). It
        // uses the package's edit distance for its did-you-mean suggestions.
        .target(
            name: "ArgumentParsing",
            dependencies: ["GroupPolicyBasics"],
            swiftSettings: strictSettings
        ),
        // The package's one HTTP/1.1 server (not a product): event loops on non-blocking sockets,
        // keep-alive, every part of an exchange bounded. The decision server and the playground
        // answer on it.
        .target(
            name: "HTTPServing",
            dependencies: [.target(name: "CEpoll", condition: .when(platforms: [.linux]))],
            swiftSettings: strictSettings
        ),
        // Linux's <sys/epoll.h>, which Swift's Glibc module leaves out: a header, nothing compiled.
        .systemLibrary(name: "CEpoll"),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // The thin client for Apple's groups endpoints: credentials and ES256 signing, one transport
        // protocol and its URLSession implementation, retry and `Retry-After`, Apple's errors.
        .target(
            name: "AppStoreGroups",
            dependencies: [
                "GroupPolicyBasics", "GroupPolicy",
                .target(name: "COpenSSL", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: strictSettings
        ),
        // Serving decisions on an app server: the decision service over a groups source, its
        // caches (the shared-cache protocols, the process-local cache), the rate-limit gate, the
        // observer, the decision log and shadow evaluation.
        .target(
            name: "GroupDecisions",
            dependencies: [
                "GroupPolicyBasics", "GroupPolicy", "AppStoreGroups",
                // glibc's malloc_trim, for the local cache's opt-in return of freed pages.
                .target(name: "CMallocInfo", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: strictSettings
        ),
        // The Redis shared cache: written against the public API of the products above and the
        // toolchain only, as a third party's backend would be.
        .target(
            name: "GroupDecisionsRedis",
            dependencies: ["GroupPolicy", "AppStoreGroups", "GroupDecisions"],
            // Only what its own imports declare is visible, as in another package.
            swiftSettings: strictSettings + [.enableUpcomingFeature("MemberImportVisibility")]
        ),
        // The test doubles an app's tests use: a static groups source, the in-memory fleet cache,
        // a manual time source, a recording observer, and the shared-cache conformance suite.
        .target(
            name: "GroupDecisionsTesting",
            dependencies: ["GroupPolicyBasics", "GroupPolicy", "AppStoreGroups", "GroupDecisions"],
            swiftSettings: strictSettings
        ),
        // glibc's allocator statistics and malloc_trim (Swift's Glibc module leaves out <malloc.h>):
        // a header, nothing compiled.
        .systemLibrary(name: "CMallocInfo"),
        // The policy playground (not a product): the page `group-policy playground` serves on
        // 127.0.0.1, its answers and its saves. Its HTML, CSS and JavaScript are files of `Web/`,
        // compiled into the binary.
        .target(
            name: "GroupPolicyPlayground",
            dependencies: ["GroupPolicyBasics", "GroupPolicy", "GroupPolicyTooling", "HTTPServing"],
            resources: [
                .embedInCode("Web/index.html"), .embedInCode("Web/playground.css"), .embedInCode("Web/favicon.svg"),
                .embedInCode("Web/js/main.js"), .embedInCode("Web/js/dom.js"), .embedInCode("Web/js/state.js"),
                .embedInCode("Web/js/api.js"), .embedInCode("Web/js/editor.js"), .embedInCode("Web/js/answers.js"),
                .embedInCode("Web/js/matrix.js"), .embedInCode("Web/js/conflict.js"),
                .embedInCode("Web/js/verdict.js"), .embedInCode("Web/js/share.js"), .embedInCode("Web/js/pin.js"),
            ],
            swiftSettings: strictSettings
        ),
        // Reading a shadow report back, strictly, streaming and bounded, for `group-policy shadow`
        // alone (not a product): a service writes its reports and never reads one.
        .target(
            name: "ShadowReportReading",
            dependencies: ["GroupPolicyBasics", "GroupPolicy", "GroupDecisions"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "group-policy",
            dependencies: [
                "GroupPolicyBasics", "GroupPolicy", "GroupPolicyTooling", "AppStoreGroups", "GroupDecisions",
                "GroupPolicyCodegen", "ArgumentParsing", "GroupPolicyPlayground", "ShadowReportReading",
            ],
            swiftSettings: strictSettings
        ),
        // The fleet simulation's command: seeds in, one line per promise broken out, over the
        // in-memory store or a Redis of the user's.
        .executableTarget(
            name: "group-decisions-simulation",
            dependencies: [
                "GroupPolicy", "GroupDecisions", "GroupDecisionsRedis", "GroupDecisionsTesting", "ArgumentParsing",
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "GroupPolicyCodegen",
            dependencies: ["GroupPolicyBasics", "GroupPolicy"],
            swiftSettings: strictSettings
        ),
        // The plugin's tool depends on the engine only, so apps using the plugin need no OpenSSL.
        .executableTarget(
            name: "group-policy-codegen",
            dependencies: ["GroupPolicyCodegen", "ArgumentParsing"],
            swiftSettings: strictSettings
        ),
        // The decision server, a sidecar for app servers in any language: routes, configuration,
        // health, metrics; its contract (openapi.json) is compiled in.
        .executableTarget(
            name: "group-decision-server",
            dependencies: [
                "GroupPolicyBasics", "GroupPolicy", "AppStoreGroups", "GroupDecisions", "GroupDecisionsRedis",
                "HTTPServing",
            ],
            resources: [.embedInCode("openapi.json")],
            swiftSettings: strictSettings
        ),
        .plugin(
            name: "TypedCapabilities",
            capability: .buildTool(),
            dependencies: ["group-policy-codegen"]
        ),
        // Helpers both library test targets share: seeded random inputs, policy builders, paths.
        .target(
            name: "GroupPolicyTestSupport",
            dependencies: ["GroupPolicy"],
            path: "Tests/GroupPolicyTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GroupPolicyBasicsTests",
            dependencies: ["GroupPolicyBasics"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GroupPolicyTests",
            dependencies: ["GroupPolicyBasics", "GroupPolicy", "GroupPolicyTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GroupPolicyToolingTests",
            dependencies: ["GroupPolicyTooling", "GroupPolicy", "GroupPolicyTestSupport"],
            swiftSettings: strictSettings
        ),
        // `swift package group-policy check Policies` in an app's package: the CLI, with no
        // permissions (the commands it offers only read, but for `playground`, which on macOS needs
        // `swift package --disable-sandbox`).
        .plugin(
            name: "GroupPolicyCommand",
            capability: .command(
                intent: .custom(
                    verb: "group-policy",
                    description: "Check, test, diff, evaluate and edit GroupPolicy policies with the group-policy CLI"
                )
            ),
            dependencies: ["group-policy"]
        ),
        .testTarget(
            name: "ArgumentParsingTests",
            dependencies: ["ArgumentParsing"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GroupPolicyCLITests",
            dependencies: [
                "group-policy", "AppStoreGroups", "GroupDecisions", "GroupPolicy", "GroupPolicyBasics",
                "GroupPolicyTestSupport", "ServingTestSupport", "ShadowReportReading",
            ],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GroupPolicyPlaygroundTests",
            dependencies: ["GroupPolicyPlayground", "ServingTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "HTTPServingTests",
            dependencies: ["HTTPServing", "ServingTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GroupPolicyCodegenTests",
            dependencies: ["GroupPolicyCodegen", "GroupPolicy"],
            swiftSettings: strictSettings
        ),
        // The fakes the serving tests share: a fake App Store (Python, verifying every token), fault
        // servers, a redis-server runner and proxies, a groups source and a shared cache to script.
        .target(
            name: "ServingTestSupport",
            dependencies: [
                "AppStoreGroups", "GroupDecisions", "GroupDecisionsRedis", "GroupDecisionsTesting", "GroupPolicyBasics",
                "GroupPolicy", "GroupPolicyTestSupport",
            ],
            path: "Tests/ServingTestSupport",
            exclude: ["Fixtures", "Server"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "AppStoreGroupsTests",
            dependencies: [
                "AppStoreGroups", "GroupPolicyBasics", "GroupPolicy", "ServingTestSupport",
                // The manual clock, for the retry waits.
                "GroupDecisionsTesting",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GroupDecisionsTests",
            dependencies: [
                "GroupDecisions", "GroupDecisionsTesting", "AppStoreGroups", "GroupPolicyBasics", "GroupPolicy",
                "GroupPolicyTestSupport", "ServingTestSupport",
                // The report reader, to read back the reports a service writes.
                "ShadowReportReading",
                .target(name: "CMallocInfo", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GroupDecisionsRedisTests",
            dependencies: [
                "GroupDecisionsRedis", "GroupDecisions", "GroupDecisionsTesting", "AppStoreGroups", "GroupPolicy",
                "GroupPolicyTestSupport", "ServingTestSupport",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GroupDecisionsTestingTests",
            dependencies: [
                "GroupDecisionsTesting", "GroupDecisions", "AppStoreGroups", "GroupPolicy", "GroupPolicyTestSupport",
                "ServingTestSupport",
                // The fleet simulation's command, run as a process.
                "group-decisions-simulation",
            ],
            swiftSettings: strictSettings
        ),
        // The decision server, run as a process against the fake App Store and a real redis-server.
        .testTarget(
            name: "GroupDecisionServerTests",
            dependencies: [
                "group-decision-server", "GroupDecisions", "AppStoreGroups", "GroupPolicy", "GroupPolicyTestSupport",
                "ServingTestSupport", "ShadowReportReading",
            ],
            swiftSettings: strictSettings
        ),
    ]
)

// The benchmark (see README, Performance): figures from release builds only. It may use
// full Foundation, and reads glibc's allocator statistics through a header-only system library.
package.products.append(.executable(name: "group-policy-bench", targets: ["group-policy-bench"]))
package.targets.append(
    .executableTarget(
        name: "group-policy-bench",
        dependencies: [
            "GroupPolicy", "AppStoreGroups", "GroupDecisions", "GroupDecisionsTesting", "CMallocInfo",
            "ArgumentParsing",
        ],
        swiftSettings: strictSettings
    )
)
