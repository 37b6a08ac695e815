import Testing

@testable import GroupPolicyBasics

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// RFC 3339 in UTC with milliseconds, at exact instants: the epoch, before it, leap days, the
/// rounding of the millisecond, and the clamping to the years 0000 to 9999.
@Suite struct TimestampTests {
    @Test(
        arguments: [
            (0, "1970-01-01T00:00:00.000Z"),
            (1_800_000_000.5, "2027-01-15T08:00:00.500Z"),
            (1_700_000_000.123, "2023-11-14T22:13:20.123Z"),
            (-0.001, "1969-12-31T23:59:59.999Z"),
            (-86_400, "1969-12-31T00:00:00.000Z"),
            // Leap days: every fourth year, not a century year unless it divides by 400.
            (951_782_400, "2000-02-29T00:00:00.000Z"),
            (4_107_542_400, "2100-03-01T00:00:00.000Z"),
            (-62_162_121_600, "0000-02-29T00:00:00.000Z"),
            (-62_135_596_800, "0001-01-01T00:00:00.000Z"),
            // To the nearest millisecond, carrying into the second.
            (1_000_000_000.9996, "2001-09-09T01:46:41.000Z"),
            (-0.0004, "1970-01-01T00:00:00.000Z"),
            (-0.0006, "1969-12-31T23:59:59.999Z"),
            // The ends of the range, and beyond them the nearest instant in it.
            (-62_167_219_200, "0000-01-01T00:00:00.000Z"),
            (253_402_300_799.999, "9999-12-31T23:59:59.999Z"),
            (-62_167_219_201, "0000-01-01T00:00:00.000Z"),
            (253_402_300_800, "9999-12-31T23:59:59.999Z"),
            (1e18, "9999-12-31T23:59:59.999Z"),
            (-1e18, "0000-01-01T00:00:00.000Z"),
            (.infinity, "9999-12-31T23:59:59.999Z"),
            (-.infinity, "0000-01-01T00:00:00.000Z"),
            (.nan, "1970-01-01T00:00:00.000Z"),
        ] as [(Double, String)]
    )
    func formats(secondsSince1970: Double, text: String) {
        #expect(Timestamp.rfc3339(Date(timeIntervalSince1970: secondsSince1970)) == text)
    }

    /// Foundation's distant past prints as January 1 of year 1 in its calendar, which is Julian
    /// before 1582; RFC 3339 counts in the proleptic Gregorian calendar, two days earlier.
    @Test func theDistantDatesAreInRange() {
        #expect(Timestamp.rfc3339(.distantPast) == "0000-12-30T00:00:00.000Z")
        #expect(Timestamp.rfc3339(.distantFuture) == "4001-01-01T00:00:00.000Z")
    }
}
