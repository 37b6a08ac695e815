/// The article's app server.
protocol AppServer: Sendable {
    func run() async throws
}

/// What the app throws for a workspace the caller may not see.
struct Forbidden: Error {}

func showSeatControls() {}
func log(_ values: Any...) {}
