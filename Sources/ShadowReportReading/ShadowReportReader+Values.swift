import Foundation
import GroupDecisions
import GroupPolicy
import GroupPolicyBasics

extension ShadowReportReader {
    /// The offset of the value at the cursor (after whitespace).
    mutating func valueOffset() throws(JSONSyntaxError) -> Int {
        _ = try peekKind()
        return scanner.position
    }

    /// What `read` reads, with the offset of the value it starts at.
    mutating func located<Value>(
        _ read: (inout Self) throws(JSONSyntaxError) -> Value?
    ) throws(JSONSyntaxError) -> (value: Value?, offset: Int) {
        let offset = try valueOffset()
        return (try read(&self), offset)
    }

    /// A string, or `nil` (reported) for a value of another type.
    mutating func string(depth: Int) throws(JSONSyntaxError) -> String? {
        let kind = try peekKind()
        guard kind == .string else {
            try wrongType(kind, expected: "a string", depth: depth)
            return nil
        }
        return try scanner.readString()
    }

    /// A string, or `nil` for JSON `null`; the outer `nil` (reported) for a value of another type.
    mutating func nullableString(depth: Int) throws(JSONSyntaxError) -> String?? {
        switch try peekKind() {
        case .null:
            _ = try scanner.readLiteral()
            return .some(nil)
        case .string:
            return .some(try scanner.readString())
        case let kind:
            try wrongType(kind, expected: "a string or null", depth: depth)
            return nil
        }
    }

    /// A whole number from `minimum` up, written without a sign, fraction or exponent.
    mutating func count(depth: Int, minimum: Int = 0) throws(JSONSyntaxError) -> Int? {
        let kind = try peekKind()
        let offset = scanner.position
        let expected = "expected a whole number of at least \(minimum) and at most 18 digits, found"
        guard kind == .number else {
            fail(at: offset, "\(expected) \(kind.name)")
            try skipValue(depth: depth)
            return nil
        }
        let text = try scanner.readNumber()
        guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), text.utf8.count <= 18, let value = Int(text),
            value >= minimum
        else {
            fail(at: offset, "\(expected) \(text)")
            return nil
        }
        return value
    }

    /// `gained` or `lost`.
    mutating func direction(depth: Int) throws(JSONSyntaxError) -> ShadowReport.Direction? {
        let offset = try valueOffset()
        guard let text = try string(depth: depth) else { return nil }
        guard let direction = ShadowReport.Direction(rawValue: text) else {
            fail(at: offset, "unknown change '\(text)' (gained or lost)")
            return nil
        }
        return direction
    }

    /// A list of rule ids, sorted by their bytes with none repeated, as the report writes them;
    /// the first problem in it is reported, and the rest of the list is only checked as JSON.
    ///
    /// The strings are counted first, so the list takes exactly its room: grown one id at a time
    /// it would hold up to twice that, and a list may be millions of ids long.
    mutating func rules(depth: Int) throws(JSONSyntaxError) -> [String]? {
        var valid = true
        var previous: (range: Range<Int>, hasEscapes: Bool)?
        var ids: [String] = []
        ids.reserveCapacity(leadingStrings())
        let isArray = try readArray(depth: depth, of: "strings") { reader, _ throws(JSONSyntaxError) in
            let kind = try reader.peekKind()
            guard kind == .string else {
                valid = false
                try reader.wrongType(kind, expected: "a string", depth: depth + 1)
                return false
            }
            let offset = reader.scanner.position
            let raw = try reader.scanner.readRawString()
            let id = try reader.decoded(raw)
            if let last = previous, let before = ids.last, !reader.ascending(last, raw, before, id) {
                valid = false
                reader.fail(
                    at: offset,
                    "rule ids must be sorted by their bytes, each once: '\(id)' follows '\(before)'"
                )
                return false
            }
            ids.append(id)
            previous = raw
            return true
        }
        return isArray && valid ? ids : nil
    }

    /// How many strings the array at the cursor starts with, counted on a copy of the scanner
    /// (whatever follows them, even bad JSON, is left to the reading).
    private func leadingStrings() -> Int {
        var probe = scanner
        guard probe.peekByte() == UInt8(ascii: "["), probe.bytes.count > probe.position else { return 0 }
        probe.position += 1
        var count = 0
        while probe.peekByte() == UInt8(ascii: "\""), (try? probe.readRawString()) != nil {
            count += 1
            guard probe.peekByte() == UInt8(ascii: ",") else { break }
            probe.position += 1
        }
        return count
    }

    /// The value of a string the scanner read as a range of its bytes.
    private func decoded(_ raw: (range: Range<Int>, hasEscapes: Bool)) throws(JSONSyntaxError) -> String {
        if raw.hasEscapes { return try scanner.decodeString(from: raw.range.lowerBound, to: raw.range.upperBound) }
        return String(decoding: UnsafeBufferPointer(rebasing: scanner.bytes[raw.range]), as: UTF8.self)
    }

    /// Whether `right` comes after `left` by their bytes: compared where they are in the input when
    /// neither has an escape, decoded otherwise.
    private func ascending(
        _ left: (range: Range<Int>, hasEscapes: Bool),
        _ right: (range: Range<Int>, hasEscapes: Bool),
        _ leftValue: String,
        _ rightValue: String
    ) -> Bool {
        guard !left.hasEscapes, !right.hasEscapes, let base = scanner.bytes.baseAddress else {
            return leftValue.utf8.lexicographicallyPrecedes(rightValue.utf8)
        }
        let common = min(left.range.count, right.range.count)
        let order = memcmp(base + left.range.lowerBound, base + right.range.lowerBound, common)
        return order != 0 ? order < 0 : left.range.count < right.range.count
    }

    /// An instant as the report writes it: RFC 3339 in UTC with milliseconds.
    mutating func instant(depth: Int) throws(JSONSyntaxError) -> Date? {
        let offset = try valueOffset()
        guard let text = try string(depth: depth) else { return nil }
        if let date = Self.instant(text) { return date }
        fail(
            at: offset,
            "expected an instant such as 2026-11-30T19:00:00.123Z (UTC, with milliseconds), found '\(text)'"
        )
        return nil
    }

    /// `text` as an instant, if it is one exactly as ``Timestamp/rfc3339(_:)`` writes it.
    private static func instant(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int64? {
            guard range.upperBound <= bytes.count, bytes[range].allSatisfy({ (0x30...0x39).contains($0) }) else {
                return nil
            }
            return bytes[range].reduce(0) { $0 * 10 + Int64($1 - 0x30) }
        }
        guard bytes.count == 24, let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            let millisecond = number(20..<23)
        else { return nil }
        // Howard Hinnant's days-from-civil; out-of-range fields fail the round trip below.
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let milliseconds = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millisecond
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
        return Timestamp.rfc3339(date) == text ? date : nil
    }
}
