import GroupPolicyBasics
import HTTPServing

/// How the playground uses the package's HTTP server: its limits, the headers every answer
/// carries, its answers' shapes, and the words of the server's refusals (`{"error": "…"}`, one
/// line, as the CLI prints it after `Error: `).
enum PlaygroundHTTP {
    /// The Content-Security-Policy of every answer: the page's own origin for its script, style,
    /// icon and requests, and nothing from anywhere else; no inline script or style, no framing,
    /// no form posting anywhere.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// How long an answer may take: 10 seconds, what one CLI command may.
    static let answerDeadline = Duration.seconds(10)

    /// The server for the page, on 127.0.0.1 only.
    ///
    /// At most 32 connections are served at once, counted from when they connect (a browser opens a
    /// handful; the page sends five requests per edit); one more is answered 503 at once, so
    /// clients that connect and send nothing cannot queue the page's requests behind them. The
    /// whole request must arrive within 10 seconds (408), a head may hold 16 KiB (431), a body
    /// ``PlaygroundApp/maximumBodyBytes`` (413, refused before it is read), and the bodies of all
    /// connections together twice that (503). Every answer must be ready within 10 seconds, the
    /// CLI's time limit (504 past it, and the connection's place is free again), so no input can
    /// hold a connection. Every answer closes its connection; each request is answered on a thread
    /// of its own with the stack the command's main thread has (the handler parses and checks
    /// policies).
    static func configuration(port: Int) -> HTTPServer.Configuration {
        var configuration = HTTPServer.Configuration()
        configuration.host = "127.0.0.1"
        configuration.port = port
        configuration.eventLoops = 1
        configuration.limits.maximumRequests = 32
        configuration.limits.maximumWaiting = 32
        configuration.limits.evictableAfter = nil
        configuration.limits.maximumHeadBytes = 16 << 10
        configuration.limits.maximumBodyBytes = PlaygroundApp.maximumBodyBytes
        configuration.limits.maximumBodyBytesInFlight = 2 * PlaygroundApp.maximumBodyBytes
        configuration.limits.readTimeout = .seconds(10)
        configuration.limits.handlerTimeout = answerDeadline
        configuration.limits.keepAlive = false
        configuration.commonHeaderFields = [
            ("Content-Security-Policy", contentSecurityPolicy),
            ("X-Content-Type-Options", "nosniff"),
            ("X-Frame-Options", "DENY"),
            ("Referrer-Policy", "no-referrer"),
            ("Cross-Origin-Resource-Policy", "same-origin"),
            ("Cache-Control", "no-store"),
        ]
        return configuration
    }

    /// The handler: the app's answers on threads of their own, the server's refusals in the
    /// playground's words.
    static func handler(_ app: PlaygroundApp) -> HTTPHandler {
        HTTPHandler(work: .thread(stackSize: 8 << 20, app.handle), refuse: refusal)
    }

    @Sendable static func refusal(_ refusal: HTTPRefusal) -> HTTPResponse {
        let message =
            switch refusal.kind {
            case .tooManyConnections, .tooManyRequests:
                "busy: \(refusal.limit) connections are being served; try again"
            case .bodyBytesInFlight: "busy: other requests hold \(refusal.limit) bytes at once; try again"
            case .requestTimeout: "the request did not arrive whole within \(refusal.limit) seconds"
            case .headTooLarge: "request head over the limit of \(refusal.limit) bytes"
            case .bareLineBreak: "a bare CR or LF, or a NUL, in the request head"
            case .malformedRequestLine: "not an HTTP/1.1 request line"
            case .targetNotAPath: "the request target must be a path starting with '/'"
            case .fieldWithoutName: "a header line without a name"
            case .whitespaceInFieldName: "whitespace in a header name"
            case .bodyNotAccepted: "this server takes no request bodies"
            case .transferEncoding: "Transfer-Encoding is not supported; send Content-Length"
            case .invalidContentLength: "an invalid Content-Length"
            case .bodyTooLarge:
                "request body of \(refusal.announced) bytes is over the limit of \(refusal.limit) bytes"
            case .handlerTimeout: "no answer within \(refusal.limit) seconds, the playground's time limit for an answer"
            }
        return .error(message, status: refusal.status)
    }
}

extension HTTPResponse {
    /// JSON text.
    static func json(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json; charset=utf-8", body: text)
    }

    /// `{"error": "…"}`: one line, as the CLI prints it after `Error: `, then any `details`.
    static func error(
        _ message: String,
        status: HTTPStatus,
        details: KeyValuePairs<String, String> = [:]
    ) -> HTTPResponse {
        let error =
            "{" + PlaygroundJSON.string("error") + ":" + PlaygroundJSON.string(message.escapingControlCharacters)
        let rest = details.map { "," + PlaygroundJSON.string($0.key) + ":" + $0.value }.joined()
        return json(error + rest + "}", status: status)
    }
}
