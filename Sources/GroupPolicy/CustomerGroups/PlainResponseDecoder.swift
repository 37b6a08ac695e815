import GroupPolicyBasics

/// Decodes the plain form of Apple's two group documents in one pass over the bytes: the form
/// Apple sends (ASCII strings without escapes, Apple's keys once each, within the limits).
///
/// It answers `nil` as soon as anything is not plain (an escape, a non-ASCII byte, a duplicate or
/// missing key, a wrong type, a limit reached, a byte order mark, malformed JSON). The caller then
/// decodes with ``ResponseDecoder``, the reference: it accepts what this one declines when it is
/// valid, and otherwise reports the error with its path and position. So this decoder never has
/// to produce an error, and whatever it returns equals what the reference returns for the same
/// bytes (the differential tests check this on mutated and random bodies).
///
/// What makes it cheap: keys matched by length and bytes, strings sliced straight from the buffer,
/// the known `groupType` and `role` values as the shared static instances, and arrays staged on
/// the stack and allocated once at their exact size.
struct PlainResponseDecoder {
    private let bytes: UnsafeBufferPointer<UInt8>
    private let limits: ResponseLimits
    private var position = 0
    /// The last role value read that is neither `ADMIN` nor `NONE`, and where its bytes are.
    private var lastUnknownRole: (Range<Int>, Role)?

    /// Elements staged on the stack before an array is allocated at its exact size; longer lists
    /// move into an array that grows as usual.
    private static let stagingCapacity = 16

    /// A decoder over `bytes`, or `nil` when the document is not one it reads (over the size limit,
    /// a byte order mark, or a depth limit below Apple's five levels).
    init?(bytes: UnsafeBufferPointer<UInt8>, limits: ResponseLimits) {
        guard bytes.count <= limits.maximumBytes, limits.maximumDepth >= 5 else { return nil }
        // The reference skips a UTF-8 byte order mark; Apple sends none, so leave it to the reference.
        guard bytes.first != 0xEF else { return nil }
        self.bytes = bytes
        self.limits = limits
    }

    // MARK: Documents

    /// The Get Customer Groups document, or `nil` when it is not plain.
    mutating func decodeCustomerGroups() -> GetCustomerGroupsResponse? {
        var groups: [GroupEntry]?
        let complete = readObject { (decoder, key) in
            guard key == .groups else { return decoder.skipValue(depth: 1) }
            guard let list = decoder.readGroups() else { return false }
            groups = list
            return true
        }
        guard complete, atEnd(), let groups else { return nil }
        return GetCustomerGroupsResponse(groups: groups)
    }

    /// The Get Group Members document, or `nil` when it is not plain.
    mutating func decodeGroupMembers() -> GetGroupMembersResponse? {
        var members: [GroupMemberEntry]?
        var hasMore: Bool?
        var token: String?
        let complete = readObject { (decoder, key) in
            switch key {
            case .members:
                guard let list = decoder.readMembers() else { return false }
                members = list
            case .hasMore:
                guard let value = decoder.readBool() else { return false }
                hasMore = value
            case .paginationToken:
                if decoder.readNull() { return true }
                guard let value = decoder.readString() else { return false }
                token = value
            default:
                return decoder.skipValue(depth: 1)
            }
            return true
        }
        guard complete, atEnd(), let members, let hasMore else { return nil }
        return GetGroupMembersResponse(members: members, hasMore: hasMore, paginationToken: token)
    }

    // MARK: Parts

    private mutating func readGroups() -> [GroupEntry]? {
        readArray(limit: limits.maximumGroups) { decoder in decoder.readGroup() }
    }

    private mutating func readGroup() -> GroupEntry? {
        // Apple's exact form first: its keys in its order, no whitespace.
        let start = position
        if take(#"{"groupId":"#), let groupID = readPlainString(), take(#","groupType":"#),
            let groupType = readGroupType()
        {
            if take("}") { return GroupEntry(groupID: string(groupID), groupType: groupType) }
            if take(#","roles":"#),
                let roles = readArray(limit: limits.maximumRoleEntriesPerGroup, { $0.readRole() }), take("}")
            {
                return GroupEntry(groupID: string(groupID), groupType: groupType, roles: roles)
            }
        }
        position = start
        return readAnyGroup()
    }

    /// A group entry in any valid form: keys in any order, whitespace, unknown keys.
    private mutating func readAnyGroup() -> GroupEntry? {
        var groupID: String?
        var groupType: GroupType?
        var roles: [RoleEntry]?
        let complete = readObject { (decoder, key) in
            switch key {
            case .groupId:
                guard let value = decoder.readString() else { return false }
                groupID = value
            case .groupType:
                guard let value = decoder.readGroupType() else { return false }
                groupType = value
            case .roles:
                if decoder.readNull() { return true }
                guard let list = decoder.readArray(limit: decoder.limits.maximumRoleEntriesPerGroup, { $0.readRole() })
                else { return false }
                roles = list
            default:
                return decoder.skipValue(depth: 3)
            }
            return true
        }
        guard complete, let groupID, let groupType else { return nil }
        return GroupEntry(groupID: groupID, groupType: groupType, roles: roles ?? [])
    }

    private mutating func readRole() -> RoleEntry? {
        // Apple's exact form first: its keys in its order, no whitespace.
        let start = position
        if take(#"{"productId":"#), let productID = readPlainString(), take(#","role":"#),
            let role = readRoleValue(), take("}")
        {
            return RoleEntry(productID: string(productID), role: role)
        }
        position = start
        return readAnyRole()
    }

    /// A role entry in any valid form: keys in any order, whitespace, unknown keys.
    private mutating func readAnyRole() -> RoleEntry? {
        var productID: String?
        var role: Role?
        let complete = readObject { (decoder, key) in
            switch key {
            case .productId:
                guard let value = decoder.readString() else { return false }
                productID = value
            case .role:
                guard let value = decoder.readRoleValue() else { return false }
                role = value
            default:
                return decoder.skipValue(depth: 5)
            }
            return true
        }
        guard complete, let productID, let role else { return nil }
        return RoleEntry(productID: productID, role: role)
    }

    private mutating func readMembers() -> [GroupMemberEntry]? {
        readArray(limit: limits.maximumMembers) { decoder in
            var transactionID: String?
            let complete = decoder.readObject { (decoder, key) in
                guard key == .appTransactionId else { return decoder.skipValue(depth: 3) }
                guard let value = decoder.readString() else { return false }
                transactionID = value
                return true
            }
            guard complete, let transactionID else { return nil }
            return GroupMemberEntry(appTransactionID: transactionID)
        }
    }

    // MARK: Structure

    @inline(__always)
    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    /// Consumes `byte` after optional whitespace, or answers false.
    @inline(__always)
    private mutating func consume(_ byte: UInt8) -> Bool {
        // Apple's documents are compact: look for the byte first, for whitespace only if it is not there.
        if position < bytes.count && bytes[position] == byte {
            position += 1
            return true
        }
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// Consumes `literal` if the bytes at the cursor are its bytes.
    @inline(__always)
    private mutating func take(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard position &+ count <= bytes.count, equals(position..<(position &+ count), literal.utf8Start) else {
            return false
        }
        position &+= count
        return true
    }

    /// Whether only whitespace is left.
    private mutating func atEnd() -> Bool {
        skipWhitespace()
        return position == bytes.count
    }

    /// Reads an object, handing each key to `member` (the cursor after the colon), which reads or
    /// skips the value and answers whether it could.
    ///
    /// A key of Apple's documents twice in one object is not plain: the reference decoder reports
    /// it, or skips it where the object does not read it.
    @inline(__always)
    private mutating func readObject(_ member: (inout PlainResponseDecoder, ResponseDecoder.Key) -> Bool) -> Bool {
        guard consume(UInt8(ascii: "{")) else { return false }
        if consume(UInt8(ascii: "}")) { return true }
        var seen: UInt16 = 0
        repeat {
            skipWhitespace()
            guard let key = readKey(), consume(UInt8(ascii: ":")) else { return false }
            if key != .other {
                let bit: UInt16 = 1 << UInt16(key.rawValue)
                guard seen & bit == 0 else { return false }
                seen |= bit
            }
            skipWhitespace()
            guard member(&self, key) else { return false }
        } while consume(UInt8(ascii: ","))
        return consume(UInt8(ascii: "}"))
    }

    /// Reads an array of at most `limit` elements into an array allocated once at its exact size
    /// (when it has at most ``stagingCapacity`` elements).
    @inline(__always)
    private mutating func readArray<Element>(
        limit: Int,
        _ element: (inout PlainResponseDecoder) -> Element?
    ) -> [Element]? {
        guard consume(UInt8(ascii: "[")) else { return nil }
        if consume(UInt8(ascii: "]")) { return [] }
        return withUnsafeTemporaryAllocation(of: Element.self, capacity: Self.stagingCapacity) { staging in
            guard let stagingBase = staging.baseAddress else { return nil }
            var staged = 0
            var spilled: [Element] = []
            defer { stagingBase.deinitialize(count: staged) }
            var count = 0
            repeat {
                guard count < limit, let next = element(&self) else { return nil }
                count += 1
                if staged < Self.stagingCapacity {
                    (stagingBase + staged).initialize(to: next)
                    staged += 1
                } else {
                    if spilled.isEmpty {
                        spilled.reserveCapacity(Self.stagingCapacity * 4)
                        spilled.append(contentsOf: UnsafeMutableBufferPointer(start: stagingBase, count: staged))
                    }
                    spilled.append(next)
                }
            } while consume(UInt8(ascii: ","))
            guard consume(UInt8(ascii: "]")) else { return nil }
            guard spilled.isEmpty else { return spilled }
            // reserveCapacity and append are specialised for `Element`; `init(unsafeUninitializedCapacity:)`
            // looks the array's storage class up at run time, at the cost of decoding a role entry.
            var exact: [Element] = []
            exact.reserveCapacity(staged)
            for index in 0..<staged { exact.append((stagingBase + index).move()) }
            staged = 0
            return exact
        }
    }

    /// Validates and skips an unknown member's value, whose object sits at `depth`.
    private mutating func skipValue(depth: Int) -> Bool {
        var scanner = JSONScanner(bytes: bytes)
        scanner.position = position
        do {
            try scanner.skipValue(depth: depth, maximumDepth: limits.maximumDepth)
        } catch {
            return false
        }
        position = scanner.position
        return true
    }

    // MARK: Scalars

    /// Reads a string without escapes or non-ASCII bytes and returns the range of its content.
    @inline(__always)
    private mutating func readPlainString() -> Range<Int>? {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        let start = position + 1
        var index = start
        // Eight bytes at a time while eight remain: find the first byte that is not printable ASCII
        // or is a quote or a backslash (bit tricks on a word, exact for the lowest flagged byte).
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while index &+ 8 <= bytes.count {
                let word = raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                let stops = Self.stops(in: word)
                if stops == 0 {
                    index &+= 8
                    continue
                }
                index &+= stops.trailingZeroBitCount >> 3
                guard bytes[index] == UInt8(ascii: "\"") else { return nil }
                position = index + 1
                return start..<index
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            // One compare for "printable ASCII" (0x20...0x7F), then the two that end or escape.
            if byte &- 0x20 < 0x60 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            guard byte == UInt8(ascii: "\"") else { return nil }
            position = index + 1
            return start..<index
        }
        return nil
    }

    /// The high bit of each byte of `word` (little-endian) that is below 0x20, at or above 0x80, a
    /// quote or a backslash; bits above the lowest one may be false alarms, the lowest never is.
    @inline(__always)
    private static func stops(in word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        func zeroBytes(_ value: UInt64) -> UInt64 { (value &- ones) & ~value & highs }
        let control = (word &- ones &* 0x20) & ~word & highs
        let quote = zeroBytes(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
        let backslash = zeroBytes(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
        return (word & highs) | control | quote | backslash
    }

    /// Reads a key and classifies it by length and bytes (a key with escapes is not plain: the
    /// reference decodes it before classifying).
    @inline(__always)
    private mutating func readKey() -> ResponseDecoder.Key? {
        guard let range = readPlainString() else { return nil }
        switch range.count {
        case 4: if equals(range, "role") { return .role }
        case 5: if equals(range, "roles") { return .roles }
        case 6: if equals(range, "groups") { return .groups }
        case 7:
            if equals(range, "groupId") { return .groupId }
            if equals(range, "members") { return .members }
            if equals(range, "hasMore") { return .hasMore }
        case 9:
            if equals(range, "productId") { return .productId }
            if equals(range, "groupType") { return .groupType }
        case 15: if equals(range, "paginationToken") { return .paginationToken }
        case 16: if equals(range, "appTransactionId") { return .appTransactionId }
        default: break
        }
        return .other
    }

    /// Whether the bytes in `range` are `literal`'s (the lengths are known to be equal).
    @inline(__always)
    private func equals(_ range: Range<Int>, _ literal: StaticString) -> Bool {
        equals(range, literal.utf8Start)
    }

    /// Whether the bytes in `range` equal as many bytes at `other`.
    @inline(__always)
    private func equals(_ range: Range<Int>, _ other: UnsafePointer<UInt8>) -> Bool {
        let count = range.count
        guard let base = bytes.baseAddress else { return count == 0 }
        let text = UnsafeRawPointer(base + range.lowerBound)
        let key = UnsafeRawPointer(other)
        // Two overlapping word loads compare 4 to 16 bytes.
        if count >= 8 && count <= 16 {
            return text.loadUnaligned(as: UInt64.self) == key.loadUnaligned(as: UInt64.self)
                && text.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
                    == key.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
        }
        if count >= 4 && count < 8 {
            return text.loadUnaligned(as: UInt32.self) == key.loadUnaligned(as: UInt32.self)
                && text.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
                    == key.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
        }
        var index = 0
        while index < count {
            if base[range.lowerBound &+ index] != other[index] { return false }
            index &+= 1
        }
        return true
    }

    @inline(__always)
    private mutating func readString() -> String? {
        guard let range = readPlainString() else { return nil }
        return string(range)
    }

    /// The string of the (validated, ASCII) bytes in `range`.
    ///
    /// `String(unsafeUninitializedCapacity:)` builds a short string in place and checks it with one
    /// ASCII scan: a quarter of the instructions of `String(decoding:as:)`, which repairs as it goes.
    @inline(__always)
    private func string(_ range: Range<Int>) -> String {
        guard let base = bytes.baseAddress, !range.isEmpty else { return "" }
        return String(unsafeUninitializedCapacity: range.count) { buffer in
            buffer.baseAddress?.initialize(from: base + range.lowerBound, count: range.count)
            return range.count
        }
    }

    private mutating func readGroupType() -> GroupType? {
        guard let range = readPlainString() else { return nil }
        if range.count == 12 && equals(range, "ORGANIZATION") { return .organization }
        if range.count == 8 && equals(range, "CONSUMER") { return .consumer }
        return GroupType(rawValue: string(range))
    }

    @inline(__always)
    private mutating func readRoleValue() -> Role? {
        guard let range = readPlainString() else { return nil }
        if range.count == 5 && equals(range, "ADMIN") { return .admin }
        if range.count == 4 && equals(range, "NONE") { return .unassigned }
        // A value this version does not know usually repeats through the response: built once.
        if let (previousRange, previous) = lastUnknownRole, previousRange.count == range.count,
            let base = bytes.baseAddress, equals(range, base + previousRange.lowerBound)
        {
            return previous
        }
        let role = Role(rawValue: string(range))
        lastUnknownRole = (range, role)
        return role
    }

    /// Consumes `null` and answers true, or answers false and consumes nothing.
    ///
    /// What may follow is checked by the caller: only `,`, `}` or whitespace continue a plain
    /// document, as only they may follow the literal in the reference.
    private mutating func readNull() -> Bool {
        take("null")
    }

    private mutating func readBool() -> Bool? {
        if take("true") { return true }
        if take("false") { return false }
        return nil
    }
}
