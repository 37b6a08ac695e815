import HTTPServing

/// A request the playground answers with an error status and one line.
struct PlaygroundFailure: Error {
    var status: HTTPStatus
    var message: String

    init(_ status: HTTPStatus, _ message: String) {
        self.status = status
        self.message = message
    }
}
