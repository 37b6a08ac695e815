import ArgumentParsing
import GroupPolicyPlayground

/// `group-policy playground`: parses its options and starts the playground (the
/// GroupPolicyPlayground target; see the DocC article "Authoring in the playground").
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
        var options = Playground.Options(directory: arguments.positionals.first ?? "Policies", port: 8080)
        if let text = arguments.value("port") {
            guard let port = Int(text), (0...65535).contains(port) else {
                throw arguments.usage("--port needs a port number from 0 to 65535, not '\(text)'")
            }
            options.port = port
        }
        // Read once: standard input (`-`) cannot be read again when the page loads.
        if let path = arguments.value("response") {
            let bytes = try readInput(path)
            let name = path == "-" ? "<stdin>" : path
            _ = try decodeResponse(bytes, fileName: name)
            options.firstResponse = (name, String(decoding: bytes, as: UTF8.self))
        }
        options.allowsResponseFilesOutside = arguments.has("allow-outside")
        let playground: Playground
        do {
            playground = try Playground(options)
        } catch {
            throw CommandFailure(.unusable, error.message)
        }
        // Written unbuffered, so a script reading the first line sees it before the first request.
        Terminal.out("Playground at http://127.0.0.1:\(playground.port)/")
        playground.run()
    }
}
