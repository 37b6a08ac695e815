import ArgumentParsing
import Foundation
import GroupPolicy
import GroupPolicyTooling
import HTTPServing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `group-policy playground`: the policy playground in the browser (see the DocC article
/// "Authoring in the playground").
enum PlaygroundCommand {
    static let spec = CommandSpec(
        "playground",
        summary: "Serve a page on 127.0.0.1 to edit, check, evaluate, explain and test the policies of a directory.",
        options: [
            .init("port", value: "n", help: "The port on 127.0.0.1 (default 8080; 0 picks a free one)."),
            .init(
                "response",
                value: "file",
                help: "A response to offer first (besides those the tests name); - for stdin."
            ),
            .allowOutside,
        ],
        arguments: .init(["policy-dir"], minimum: 0, maximum: 1, missingMessage: "give at most one POLICY-DIR"),
        details: """
            POLICY-DIR (default Policies) holds the policy set; its test files' responses are offered on the page.
            The first line on stdout is 'Playground at http://127.0.0.1:PORT/'; the command serves until stopped.
            Only the page's own requests are answered (Host and Origin are checked); save writes a policy file
            of the directory, and only when the directory with the edit checks without errors.
            Exit status: 2 bad usage, an unreadable directory or response, or a port that cannot be listened on.
            """
    )

    static func run(_ arguments: ParsedArguments) throws(CommandFailure) {
        let directory = arguments.positionals.first ?? "Policies"
        let port = try portNumber(arguments)
        do {
            _ = try PolicyWorkbench(directory: directory)
        } catch {
            throw CommandFailure(.unusable, error.message)
        }
        // Read once: standard input (`-`) cannot be read again when the page loads.
        let response = try arguments.value("response").map { path throws(CommandFailure) in
            let bytes = try readInput(path)
            let name = path == "-" ? "<stdin>" : path
            _ = try decodeResponse(bytes, fileName: name)
            return PlaygroundResponses.Choice(name: name, text: String(decoding: bytes, as: UTF8.self))
        }
        let server: HTTPServer
        do {
            server = try HTTPServer(PlaygroundHTTP.configuration(port: port))
        } catch {
            throw CommandFailure(.unusable, error.message)
        }
        var app = PlaygroundApp(directory: directory, port: server.port, response: response)
        app.allowsResponseFilesOutside = arguments.has("allow-outside")
        // Written unbuffered, so a script reading the first line sees it before the first request.
        Terminal.out("Playground at http://127.0.0.1:\(server.port)/")
        server.run(PlaygroundHTTP.handler(app))
    }

    /// `--port N`: 0 to 65535, 8080 when not given.
    private static func portNumber(_ arguments: ParsedArguments) throws(CommandFailure) -> Int {
        guard let text = arguments.value("port") else { return 8080 }
        guard let port = Int(text), (0...65535).contains(port) else {
            throw arguments.usage("--port needs a port number from 0 to 65535, not '\(text)'")
        }
        return port
    }
}
