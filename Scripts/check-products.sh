#!/usr/bin/env bash
# Proves what the library products promise to a package that depends on this one by path:
#
#   1. a target depending only on the AppStoreGroups product builds without compiling
#      GroupDecisions, GroupDecisionsRedis, GroupDecisionsTesting or the tooling;
#   2. Sources/GroupDecisionsRedis, copied unchanged into that package as a target of its own,
#      compiles against the products' public API (no `package` access, no @testable, no @_spi).
#
# The app package of Examples/AppIntegration (CI builds and tests it) is the proof for the serving
# path without Redis. Takes a few minutes on a cold build: it compiles the products again.
#
#   Scripts/check-products.sh            uses a fresh temporary directory, removed afterwards
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
identity="$(basename "$root" | tr '[:upper:]' '[:lower:]')"

mkdir -p "$work/Sources/ClientOnly" "$work/Sources/RedisCopy"
cp -R "$root/Sources/GroupDecisionsRedis/." "$work/Sources/RedisCopy/"
rm -rf "$work/Sources/RedisCopy/"*.docc
cat >"$work/Package.swift" <<SWIFT
// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "ProductsCheck",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [.package(path: "$root")],
    targets: [
        .executableTarget(
            name: "ClientOnly",
            dependencies: [
                .product(name: "AppStoreGroups", package: "$identity"),
                .product(name: "GroupPolicy", package: "$identity"),
            ]
        ),
        .target(
            name: "RedisCopy",
            dependencies: [
                .product(name: "GroupPolicy", package: "$identity"),
                .product(name: "AppStoreGroups", package: "$identity"),
                .product(name: "GroupDecisions", package: "$identity"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("InternalImportsByDefault"),
                .enableUpcomingFeature("MemberImportVisibility"),
            ]
        ),
    ]
)
SWIFT
cat >"$work/Sources/ClientOnly/main.swift" <<'SWIFT'
import AppStoreGroups
import GroupPolicy

let credentials = AppStoreCredentials(keyID: "K", issuerID: "I", bundleID: "com.example", privateKeyPEM: "")
do {
    _ = try AppStoreGroupsClient(server: .sandbox, credentials: credentials)
} catch {
    print("client refused its credentials:", error.code)
}
SWIFT

echo "==> A target on the AppStoreGroups product alone"
swift build --package-path "$work" --target ClientOnly
bin="$(swift build --package-path "$work" --show-bin-path)"
# SwiftPM makes a folder for every target of the graph; a compiled one holds object files.
compiled() { [[ -n "$(find "$bin/$1.build" -name '*.o' -print -quit 2>/dev/null)" ]]; }
compiled AppStoreGroups || { echo "error: found no object files of AppStoreGroups in $bin" >&2; exit 1; }
for module in GroupDecisions GroupDecisionsRedis GroupDecisionsTesting GroupPolicyTooling; do
    if compiled "$module"; then
        echo "error: building a target on the AppStoreGroups product compiled $module" >&2
        exit 1
    fi
done

echo "==> Sources/GroupDecisionsRedis, unchanged, as a target of another package"
swift build --package-path "$work" --target RedisCopy

echo "Products check passed"
