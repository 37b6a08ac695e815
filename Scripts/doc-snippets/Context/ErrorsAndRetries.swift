import Foundation

/// What the app throws when groups are unavailable.
struct Unavailable: Error {
    var retryAfter: Date?
}
