import Testing

@testable import GroupDecisions

/// A customer's local copies are found by the id's exact bytes, as the shared stores key them.
struct CustomerKeyTests {
    @Test(
        "one key only for the same bytes: case, Unicode normalisation, and an ASCII id against its canonical equivalent",
        arguments: [
            ("c1", "c1", true), ("2000000000000001", "2000000000000001", true), ("caf\u{E9}", "caf\u{E9}", true),
            ("admin1", "ADMIN1", false), ("caf\u{E9}", "cafe\u{301}", false),
            // U+037E and U+212A decompose to ASCII ";" and "K": equal as Strings, not as bytes.
            ("id;", "id\u{37E}", false), ("K1", "\u{212A}1", false),
        ]
    )
    func byteForByte(left: String, right: String, same: Bool) {
        let keys = [left, right].map { CustomerKey(environment: .sandbox, customerID: $0) }
        #expect((keys[0] == keys[1]) == same)
        #expect(Set(keys).count == (same ? 1 : 2))
        #expect(keys[0] != CustomerKey(environment: .production, customerID: left))
    }
}
