import Foundation
import GroupPolicy
import GroupPolicyBasics
import HTTPServing

/// The playground's routes: the page and its script and style, the directory's files, and one
/// route per answer, each computed by the code the CLI's commands run (see
/// `PlaygroundApp+Answers.swift`).
///
/// Every request must name this playground's loopback address in `Host` (421 otherwise: a page
/// of another site reaching it through DNS rebinding names its own host). A request that carries
/// an `Origin` must carry this playground's, `http://127.0.0.1:PORT` or `http://localhost:PORT`,
/// and every `POST` must carry one (403 otherwise: browsers send it with every `POST`, so only a
/// client that is not a browser lacks it, and it can send one); a request a browser marks as
/// coming from another site (`Sec-Fetch-Site: cross-site` or `same-site`, which includes another
/// port of 127.0.0.1) is refused too. A `POST` body is JSON (415 otherwise, so that no
/// cross-site form can post one). An answer that the inputs make impossible (a policy that does
/// not load, an invalid response) is `200` with `{"error": …}`, the line the CLI prints: the page
/// shows it as it would any other answer.
struct PlaygroundApp: Sendable {
    /// The policy directory, as given.
    let directory: String
    /// The port the server listens on.
    let port: Int
    /// The response of `--response`, read once when the command starts.
    let response: PlaygroundResponses.Choice?
    /// Whether a test case's `responseFile` may lie outside its test file's project (`--allow-outside`).
    var allowsResponseFilesOutside = false
    /// Held while a save checks and writes, so that two saves cannot each check clean against the
    /// other's old file.
    let saving = Locked(())
    /// At most ``ComputationGate/defaultCapacity`` answers computed at once.
    var gate = ComputationGate()
    /// One matrix at a time per page.
    let matrixFlights = MatrixFlights()

    /// The most bytes of a request body: the policy set limit of one command (32 MiB) and the
    /// response limit (1 MiB), plus 1 MiB for the JSON around them.
    static let maximumBodyBytes = (32 << 20) + ResponseLimits.default.maximumBytes + (1 << 20)

    /// Answers a request; a refusal for the playground's safety (a foreign `Host` or `Origin`, a
    /// request from another site) is also one line on standard error, for the author to see.
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        do {
            return try route(request)
        } catch {
            if error.status == .forbidden || error.status == .misdirectedRequest {
                let line = "playground: \(request.method) \(request.path): \(error.message)".escapingControlCharacters
                FileHandle.standardError.write(Data((line + "\n").utf8))
            }
            return .error(error.message, status: error.status, details: error.details)
        }
    }

    private func route(_ request: HTTPRequest) throws(PlaygroundFailure) -> HTTPResponse {
        try checkHost(request)
        try checkOrigin(request)
        if let asset = PlaygroundAssets.byPath[request.path] {
            guard request.method == "GET" else { throw notAllowed(request, allowing: "GET") }
            return HTTPResponse(contentType: asset.contentType, body: asset.body)
        }
        if request.path == "/api/files" {
            guard request.method == "GET" else { throw notAllowed(request, allowing: "GET") }
            // Every policy file read and escaped: on a large set as costly as any answer (24 page
            // loads of a 30 MB set at once held 1.7 GB), so it takes one of the gate's places too.
            return try gate.run { () throws(PlaygroundFailure) in try files() }
        }
        guard let answer = Self.answers[request.path] else {
            throw PlaygroundFailure(.notFound, "no such page: \(request.path)")
        }
        guard request.method == "POST" else { throw notAllowed(request, allowing: "POST") }
        guard request.header("origin") != nil else {
            throw PlaygroundFailure(.forbidden, "refused: a POST needs the Origin of this playground (\(ownOrigin))")
        }
        guard request.header("content-type")?.lowercased().hasPrefix("application/json") == true else {
            throw PlaygroundFailure(.unsupportedMediaType, "a POST body must be JSON (Content-Type: application/json)")
        }
        let body = try PlaygroundRequest.decode(request.body)
        guard request.path == "/api/matrix", let page = body.page else {
            return try gate.run { () throws(PlaygroundFailure) in try answer(self)(body) }
        }
        // The page's place is taken before the wait for the gate, so a second request waiting
        // behind the first is refused too.
        guard page.utf8.count <= MatrixFlights.maximumPageIDBytes else {
            throw PlaygroundFailure(
                .badRequest,
                "the request's 'page' is over the limit of \(MatrixFlights.maximumPageIDBytes) bytes"
            )
        }
        guard matrixFlights.begin(page) else {
            throw PlaygroundFailure(
                .tooManyRequests,
                "busy: this page's previous matrix is still being computed (one at a time per page)"
            )
        }
        defer { matrixFlights.end(page) }
        return try gate.run { () throws(PlaygroundFailure) in try answer(self)(body) }
    }

    /// The `POST` routes.
    private static let answers:
        [String: @Sendable (PlaygroundApp) -> (PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse] = [
            "/api/check": { app in { request throws(PlaygroundFailure) in try app.check(request) } },
            "/api/decision": { app in { request throws(PlaygroundFailure) in try app.decision(request) } },
            "/api/explain": { app in { request throws(PlaygroundFailure) in try app.explain(request) } },
            "/api/tests": { app in { request throws(PlaygroundFailure) in try app.tests(request) } },
            "/api/matrix": { app in { request throws(PlaygroundFailure) in try app.matrix(request) } },
            "/api/save": { app in { request throws(PlaygroundFailure) in try app.save(request) } },
            "/api/add-test": { app in { request throws(PlaygroundFailure) in try app.addTest(request) } },
        ]

    // MARK: Refusals

    /// The `Host` values that name this playground: its loopback names with its port (and without
    /// it on port 80, where browsers leave it out).
    var allowedHosts: Set<String> {
        let names = ["127.0.0.1", "localhost", "[::1]"]
        return Set(names.map { "\($0):\(port)" } + (port == 80 ? names : []))
    }

    /// The origins of the playground's own page.
    var allowedOrigins: Set<String> {
        let names = ["127.0.0.1", "localhost"]
        return Set(names.map { "http://\($0):\(port)" } + (port == 80 ? names.map { "http://\($0)" } : []))
    }

    /// The origin the page is served from, as the refusals name it.
    private var ownOrigin: String { "http://127.0.0.1:\(port)" }

    private func checkHost(_ request: HTTPRequest) throws(PlaygroundFailure) {
        guard let host = request.header("host") else {
            throw PlaygroundFailure(.badRequest, "a request needs one Host header")
        }
        guard allowedHosts.contains(host.lowercased()) else {
            throw PlaygroundFailure(
                .misdirectedRequest,
                "refused: Host '\(host)' is not this playground's loopback address (127.0.0.1:\(port))"
            )
        }
    }

    private func checkOrigin(_ request: HTTPRequest) throws(PlaygroundFailure) {
        let origins = request.headerValues("origin")
        if !origins.isEmpty {
            guard let origin = request.header("origin"), allowedOrigins.contains(origin.lowercased()) else {
                let origin = origins.joined(separator: ", ")
                throw PlaygroundFailure(
                    .forbidden,
                    "refused: Origin '\(origin)' is not this playground's (\(ownOrigin))"
                )
            }
        }
        if let site = request.header("sec-fetch-site")?.lowercased(), site == "cross-site" || site == "same-site" {
            throw PlaygroundFailure(.forbidden, "refused: a request from another site (Sec-Fetch-Site: \(site))")
        }
    }

    private func notAllowed(_ request: HTTPRequest, allowing method: String) -> PlaygroundFailure {
        PlaygroundFailure(.methodNotAllowed, "\(request.method) is not allowed on \(request.path) (use \(method))")
    }
}
