/// Shadow report JSON near the 64 MiB `group-policy shadow` reads, for the reader's and the
/// CLI's bounds: written byte by byte, so a debug build makes 62 MiB in about a second.
///
/// Every row has the same length (fixed-width names), so a test can say where row `n` starts.
package enum LargeShadowReport {
    /// The report's keys before `changes`, compact, as `"key":value,` pairs.
    package static let head =
        #"{"liveRevision":"49c9b1f4e538bd3a","candidateRevision":"ec499e3986364ea5","#
        + #""since":"2027-01-15T08:00:00.250Z","decisions":100000,"changedDecisions":90000,"#
        + #""dropped":0,"skippedDecisions":0,"#

    /// The byte offset of row `row` in ``report(rows:idsPerRow:idLength:lastRowRepeatsFirst:head:tail:)``
    /// (each row is ``rowLength(idsPerRow:idLength:)`` bytes, then a comma).
    package static func offset(ofRow row: Int, idsPerRow: Int, idLength: Int = 15, head: String = head) -> Int {
        head.utf8.count + #""changes":["#.utf8.count + row * (rowLength(idsPerRow: idsPerRow, idLength: idLength) + 1)
    }

    /// The bytes of one row.
    package static func rowLength(idsPerRow: Int, idLength: Int = 15) -> Int {
        var bytes: [UInt8] = []
        appendRow(0, idsPerRow: idsPerRow, idLength: idLength, liveIDs: idsPerRow / 2, to: &bytes)
        return bytes.count
    }

    /// A report of `rows` rows (capability `c` and 5 digits, lost, in ORGANIZATION groups, one
    /// example), each listing `idsPerRow` distinct rule ids of `idLength` bytes (`r` and digits, or
    /// only digits from 16 bytes), the first half live, the rest candidate (or all live).
    ///
    /// - Parameters:
    ///   - rows: How many rows.
    ///   - idsPerRow: How many rule ids each row lists.
    ///   - idLength: The bytes of each rule id.
    ///   - allLive: Every rule id on the live side, none on the candidate's.
    ///   - lastRowRepeatsFirst: The last row is the first one again.
    ///   - head: What comes before `"changes":[`.
    ///   - tail: What comes after the rows' `]` and before the final `}`.
    /// - Returns: The report's compact JSON.
    package static func report(
        rows: Int,
        idsPerRow: Int,
        idLength: Int = 15,
        allLive: Bool = false,
        lastRowRepeatsFirst: Bool = false,
        head: String = head,
        tail: String = ""
    ) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(
            offset(ofRow: rows, idsPerRow: idsPerRow, idLength: idLength, head: head) + tail.utf8.count
        )
        bytes.append(contentsOf: head.utf8)
        bytes.append(contentsOf: #""changes":["#.utf8)
        for index in 0..<rows {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            let source = lastRowRepeatsFirst && index == rows - 1 && rows > 1 ? 0 : index
            appendRow(
                source,
                idsPerRow: idsPerRow,
                idLength: idLength,
                liveIDs: allLive ? idsPerRow : idsPerRow / 2,
                to: &bytes
            )
        }
        bytes.append(UInt8(ascii: "]"))
        bytes.append(contentsOf: tail.utf8)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The rule id `number`: `idLength` bytes.
    package static func ruleID(_ number: Int, idLength: Int = 15) -> String {
        var bytes: [UInt8] = []
        appendID(number, idLength: idLength, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func appendRow(
        _ index: Int,
        idsPerRow: Int,
        idLength: Int,
        liveIDs: Int,
        to bytes: inout [UInt8]
    ) {
        bytes.append(contentsOf: #"{"capability":"c"#.utf8)
        appendDigits(index, width: 5, to: &bytes)
        bytes.append(contentsOf: #"","change":"lost","groupType":"ORGANIZATION","liveRules":["#.utf8)
        for id in 0..<idsPerRow {
            if id == liveIDs { bytes.append(contentsOf: #"],"candidateRules":["#.utf8) }
            if id != 0 && id != liveIDs { bytes.append(UInt8(ascii: ",")) }
            bytes.append(UInt8(ascii: "\""))
            appendID(index * idsPerRow + id, idLength: idLength, to: &bytes)
            bytes.append(UInt8(ascii: "\""))
        }
        if liveIDs == idsPerRow { bytes.append(contentsOf: #"],"candidateRules":["#.utf8) }
        bytes.append(contentsOf: #"],"groups":2,"decisions":1,"examples":[{"decisionId":"d","#.utf8)
        bytes.append(contentsOf: #""customerHash":null,"groupId":"g"}]}"#.utf8)
    }

    private static func appendID(_ number: Int, idLength: Int, to bytes: inout [UInt8]) {
        if idLength < 16 { bytes.append(UInt8(ascii: "r")) }
        appendDigits(number, width: idLength < 16 ? idLength - 1 : idLength, to: &bytes)
    }

    private static func appendDigits(_ number: Int, width: Int, to bytes: inout [UInt8]) {
        let start = bytes.count
        for _ in 0..<width { bytes.append(UInt8(ascii: "0")) }
        var rest = number
        var index = start + width - 1
        while rest > 0 && index >= start {
            bytes[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
            index -= 1
        }
    }
}
