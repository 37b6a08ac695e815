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
        .executable(name: "group-policy-bench", targets: ["group-policy-bench"]),
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
        .executableTarget(
            name: "group-policy-bench",
            dependencies: ["GroupPolicy", "CMallocInfo"],
            swiftSettings: strictSettings
        ),
        .systemLibrary(name: "CMallocInfo"),
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
