import HTTPServing

/// A request the playground answers with an error status and one line (`{"error": "…"}`), and
/// what else the page needs to act on it (a save's conflict: both texts).
struct PlaygroundFailure: Error {
    var status: HTTPStatus
    var message: String
    /// Members of the answer after `error`, each JSON text already.
    var details: KeyValuePairs<String, String> = [:]

    init(_ status: HTTPStatus, _ message: String, details: KeyValuePairs<String, String> = [:]) {
        self.status = status
        self.message = message
        self.details = details
    }
}
