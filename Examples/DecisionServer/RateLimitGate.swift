import AppStoreGroups
import Foundation
import Synchronization

/// Holds back every request to the App Store, for every customer, from the moment Apple answers
/// 429 until the `Retry-After` instant it names.
///
/// Apple counts requests per app, so one customer's 429 is everyone's: a request sent before the
/// instant only spends the budget again. The gate wraps the transport, so it sees every request
/// (each page of a member listing, each retry) and every answer; a request it holds back fails at
/// once with ``AppStoreGroupsError/Code/rateLimitExceeded`` and the instant, which the server
/// answers 503 with `Retry-After`, granting nothing.
///
/// A 429 without a usable `Retry-After` (Apple's is a UNIX time in milliseconds) closes the gate
/// for ``defaultWait``; an instant further away than ``longestWait`` is cut to it, so a wrong
/// header cannot stop the server for good.
final class RateLimitGate: HTTPTransport {
    static let defaultWait: Duration = .seconds(60)
    static let longestWait: Duration = .seconds(3600)

    private let transport: any HTTPTransport
    /// The instant before which nothing is sent; `nil` when open.
    private let closedUntil = Mutex<Date?>(nil)

    init(wrapping transport: any HTTPTransport) {
        self.transport = transport
    }

    /// The instant before which nothing is sent, if the gate is closed now.
    var retryAfter: Date? {
        closedUntil.withLock { until in
            guard let instant = until, instant > Date() else { return nil }
            return instant
        }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if let instant = retryAfter {
            throw AppStoreGroupsError(
                code: .rateLimitExceeded,
                message: "not sent: the App Store answered with its rate limit, "
                    + "which holds until the Retry-After instant",
                retryAfter: instant
            )
        }
        let response = try await transport.send(request)
        if response.status == 429 {
            let now = Date()
            let named =
                response.value(forHeader: "Retry-After").flatMap(Self.instant) ?? now + Self.seconds(Self.defaultWait)
            let instant = min(named, now + Self.seconds(Self.longestWait))
            closedUntil.withLock { until in until = max(until ?? instant, instant) }
        }
        return response
    }

    /// Apple's `Retry-After`: a UNIX time in milliseconds.
    static func instant(_ value: String) -> Date? {
        let digits = value.trimmingCharacters(in: .whitespaces)
        guard !digits.isEmpty, digits.count <= 15, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let milliseconds = Int64(digits), milliseconds >= 1_000_000_000_000
        else { return nil }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        TimeInterval(duration.components.seconds)
    }
}
