import Foundation
package import Testing

/// Something a test needs that a developer's machine may lack, such as the Python package the fake App Store verifies
/// tokens with.
///
/// A test that needs a missing component is skipped with one line naming it and how to install it, so `swift test`
/// passes on a fresh machine. CI installs every component and sets `GROUP_POLICY_REQUIRE_ALL_TESTS=1`: then such a test
/// runs anyway (and fails on the missing component), and `.ci/run` also fails on any skipped test.
package struct OptionalComponent: Sendable {
    /// What is missing, as the skip line names it.
    package var name: String
    /// How to install it.
    package var installation: String
    /// Whether it is there; probed once per test process.
    package var isAvailable: Bool

    /// Python's `cryptography` package: the fake App Store (Server/fake_app_store.py) verifies every
    /// token with it, and the fault server makes its TLS certificates with it.
    package static let pythonCryptography = OptionalComponent(
        name: "Python's cryptography package",
        installation: "python3 -m pip install cryptography",
        isAvailable: probe(["python3", "-c", "import cryptography"])
    )

    /// `redis-server`: the shared-store tests start their own on a loopback port.
    package static let redisServer = OptionalComponent(
        name: "redis-server",
        installation: "apt-get install redis-server",
        isAvailable: probe(["redis-server", "--version"])
    )

    /// Chromium, its driver and Selenium: the playground's browser test (Tests/Browser) drives the
    /// page in headless Chromium through Debian's `chromedriver`.
    package static let browser = OptionalComponent(
        name: "Chromium, chromedriver or Selenium",
        installation: "apt-get install chromium chromium-driver && python3 -m pip install selenium",
        isAvailable: probe([
            "python3", "-c",
            "import os, sys, selenium; sys.exit(0 if os.access('/usr/bin/chromedriver', os.X_OK) and any("
                + "os.access(p, os.X_OK) for p in ('/usr/bin/chromium', '/usr/bin/chromium-browser', "
                + "'/usr/bin/google-chrome')) else 1)",
        ])
    )

    /// openapi-spec-validator and schemathesis (PyPI): the decision server's contract is validated,
    /// and the live server is tested against it.
    package static let openAPITools = OptionalComponent(
        name: "openapi-spec-validator or schemathesis",
        installation: "python3 -m pip install openapi-spec-validator schemathesis",
        isAvailable: probe(["python3", "-c", "import openapi_spec_validator"]) && probe(["schemathesis", "--version"])
    )

    /// prometheus-client (PyPI): the decision server's `/metrics` is read with its parser.
    package static let prometheusClient = OptionalComponent(
        name: "prometheus-client",
        installation: "python3 -m pip install prometheus-client",
        isAvailable: probe(["python3", "-c", "import prometheus_client"])
    )

    /// Debian's ESLint: the playground's JavaScript is linted with it (`.ci/run`, and a test of the
    /// GroupPolicyPlayground target).
    package static let eslint = OptionalComponent(
        name: "ESLint",
        installation: "apt-get install eslint",
        isAvailable: probe(["NODE_PATH=\(eslintModulePath)", "eslint", "--version"])
    )

    /// Where Debian keeps the Node modules its `eslint` needs: on Debian's own `nodejs` they are
    /// found without it, but a Node.js from elsewhere (NodeSource's, say) does not look there.
    package static let eslintModulePath = "/usr/share/nodejs"

    /// Whether every optional component must be present (CI).
    package static let allRequired = ProcessInfo.processInfo.environment["GROUP_POLICY_REQUIRE_ALL_TESTS"] == "1"

    /// Whether a command exits 0, its output discarded.
    private static func probe(_ command: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(filePath: "/usr/bin/env")
        process.arguments = command
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}

extension Trait where Self == ConditionTrait {
    /// Skips the test, with one line naming the component and how to install it, when the component
    /// is missing (unless every component is required).
    package static func requires(_ component: OptionalComponent) -> Self {
        .enabled(
            if: component.isAvailable || OptionalComponent.allRequired,
            "needs \(component.name), which is not installed: \(component.installation)"
        )
    }
}
