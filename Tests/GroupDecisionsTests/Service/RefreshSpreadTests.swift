import Foundation
import GroupDecisionsTesting
import GroupPolicy
import ServingTestSupport
import Testing

@testable import GroupDecisions

/// The refresh spread at work in the service: answers fetched together come due for a refresh ahead
/// at different instants, each at the point the freshness policy computes for its draw.
@Suite("Freshness: the refresh spread")
struct RefreshSpreadTests {
    @Test("twenty answers fetched at one instant come due apart, each at its own refresh point")
    func answersFetchedTogetherComeDueApart() throws {
        let service = try ServiceHarness(
            source: StaticGroupsSource([:]),
            time: .system,
            configuration: GroupDecisionService.Configuration()
        )
        .service
        let fetchedAt = Date(timeIntervalSince1970: 1_800_000_000)
        var points: Set<Duration> = []
        for index in 0..<20 {
            let customerID = "c\(index)"
            let draw = FreshnessPolicy.draw(customerID: customerID, fetchedAt: fetchedAt)
            let point = try #require(service.configuration.freshness.refreshPoint(draw: draw))
            #expect(point >= .seconds(225) && point < .seconds(255))
            // Points are whole milliseconds: half of one either side is clear of `Date`'s rounding.
            let (seconds, attoseconds) = point.components
            let due = fetchedAt.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
            #expect(
                service.configuration.freshness.verdict(
                    .groups,
                    fetchedAt: fetchedAt,
                    now: due.addingTimeInterval(-0.0005),
                    customerID: customerID
                ) != .refreshDue
            )
            #expect(
                service.configuration.freshness.verdict(
                    .groups,
                    fetchedAt: fetchedAt,
                    now: due.addingTimeInterval(0.0005),
                    customerID: customerID
                ) == .refreshDue
            )
            points.insert(point)
        }
        // Without the spread all twenty would come due at 225 seconds.
        #expect(points.count == 20)
    }

    @Test("with the spread off, every answer comes due at the refresh point itself")
    func noSpread() throws {
        var configuration = GroupDecisionService.Configuration()
        configuration.freshness.refreshSpread = .zero
        let service = try ServiceHarness(
            source: StaticGroupsSource([:]),
            time: .system,
            configuration: configuration
        )
        .service
        let fetchedAt = Date(timeIntervalSince1970: 1_800_000_000)
        for index in 0..<20 {
            #expect(
                service.configuration.freshness.verdict(
                    .groups,
                    fetchedAt: fetchedAt,
                    now: fetchedAt.addingTimeInterval(224.999),
                    customerID: "c\(index)"
                ) != .refreshDue
            )
            #expect(
                service.configuration.freshness.verdict(
                    .groups,
                    fetchedAt: fetchedAt,
                    now: fetchedAt.addingTimeInterval(225),
                    customerID: "c\(index)"
                ) == .refreshDue
            )
        }
    }
}
