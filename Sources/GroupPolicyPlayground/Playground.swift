import GroupPolicyTooling
import HTTPServing

/// The policy playground: a page on 127.0.0.1 to edit, check, evaluate, explain, test and save the
/// policies of a directory (see the GroupPolicyTooling article "Authoring in the playground").
///
/// `group-policy playground` parses its arguments into ``Options``, starts a playground (which
/// listens at once, so the command can print its address) and runs it until the process ends:
///
/// ```swift
/// let playground = try Playground(Playground.Options(directory: "Policies", port: 8080))
/// print("Playground at http://127.0.0.1:\(playground.port)/")
/// playground.run()
/// ```
package struct Playground: Sendable {
    /// What the command line chose.
    package struct Options: Sendable {
        /// The policy directory.
        package var directory: String
        /// The port on 127.0.0.1; 0 picks a free one.
        package var port: Int
        /// A response to offer first (`--response`), read and checked by the command.
        package var firstResponse: (name: String, text: String)?
        /// Whether a test case's `responseFile` may lie outside its test file's project
        /// (`--allow-outside`).
        package var allowsResponseFilesOutside = false

        /// How long a request waits for one of the places ``ComputationGate`` keeps.
        var computationWait = Duration.seconds(5)

        /// Options of a directory and a port, offering the responses the tests name.
        package init(directory: String, port: Int) {
            self.directory = directory
            self.port = port
        }
    }

    /// Why a playground cannot start: one line, as the command prints it after `Error: `.
    package struct StartFailure: Error {
        package var message: String
    }

    private let server: HTTPServer
    let app: PlaygroundApp

    /// The port the page is served on.
    package var port: Int { server.port }

    /// Opens the directory and listens on 127.0.0.1; nothing is answered before ``run()``.
    ///
    /// - Throws: ``StartFailure`` when the directory holds no policy set that can be listed, or
    ///   the port cannot be listened on.
    package init(_ options: Options) throws(StartFailure) {
        do {
            _ = try PolicyWorkbench(directory: options.directory)
        } catch {
            throw StartFailure(message: error.message)
        }
        do {
            server = try HTTPServer(PlaygroundHTTP.configuration(port: options.port))
        } catch {
            throw StartFailure(message: error.message)
        }
        var app = PlaygroundApp(
            directory: options.directory,
            port: server.port,
            response: options.firstResponse.map { PlaygroundResponses.Choice(name: $0.name, text: $0.text) }
        )
        app.allowsResponseFilesOutside = options.allowsResponseFilesOutside
        app.gate = ComputationGate(maximumWait: options.computationWait)
        self.app = app
    }

    /// Serves the page until ``stop()`` (or the process's end).
    package func run() {
        server.run(PlaygroundHTTP.handler(app))
    }

    /// Stops serving: ``run()`` returns once the requests in flight are answered (at most a second).
    package func stop() {
        server.stop(within: .seconds(1))
    }
}
