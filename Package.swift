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
        .executable(name: "group-policy", targets: ["group-policy"]),
    ],
    targets: [
        .target(
            name: "GroupPolicy",
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "group-policy",
            dependencies: ["GroupPolicy"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GroupPolicyTests",
            dependencies: ["GroupPolicy"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "GroupPolicyCLITests",
            dependencies: ["group-policy"],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
    ]
)

// The benchmark of issue #5 (see README, Performance): figures from release builds only. It may use
// full Foundation, and reads glibc's allocator statistics through a header-only system library.
package.products.append(.executable(name: "group-policy-bench", targets: ["group-policy-bench"]))
package.targets += [
    .executableTarget(
        name: "group-policy-bench",
        dependencies: ["GroupPolicy", "CMallocInfo"],
        swiftSettings: strictSettings
    ),
    .systemLibrary(name: "CMallocInfo"),
]
