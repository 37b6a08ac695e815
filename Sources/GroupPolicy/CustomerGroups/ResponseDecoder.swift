import GroupPolicyBasics

/// Decodes Apple's group documents straight from bytes into the models, without an intermediate
/// tree or `Codable` machinery: this is the per-request path.
///
/// Strict where Apple's contract is firm (valid JSON, required keys, JSON types, no duplicate
/// keys), tolerant where Apple may evolve (unknown keys are skipped, unknown enum values kept).
struct ResponseDecoder {
    /// A decoding failure: where (byte offset, JSON path) and what.
    struct Failure: Error {
        var offset: Int
        var path: JSONPath
        var message: String
        var isLimit = false
        /// Whether the bytes are not JSON at all (as opposed to JSON of the wrong shape).
        var isSyntax = false

        init(offset: Int, path: Path, message: String, isLimit: Bool = false, isSyntax: Bool = false) {
            self.offset = offset
            self.path = path.jsonPath
            self.message = message
            self.isLimit = isLimit
            self.isSyntax = isSyntax
        }
    }

    /// Where the decoder is in the document, in 24 bytes of plain values (no allocation per value
    /// read); it becomes a ``JSONPath`` only when a failure is reported.
    ///
    /// Apple's documents alternate keys and array indices from the root, and the decoder descends
    /// at most five levels (`groups[3].roles[7].productId`): three keys, two indices.
    struct Path {
        private var keys: (Key, Key, Key) = (.other, .other, .other)
        private var indices: (Int, Int) = (0, 0)
        private var count = 0

        static let root = Path()

        /// The path to member `key` of the object at this path (which ends with an index, or is the root).
        func appending(_ key: Key) -> Path {
            var copy = self
            switch count {
            case 0: copy.keys.0 = key
            case 2: copy.keys.1 = key
            case 4: copy.keys.2 = key
            default: return self  // Not a shape the decoder reads (see above).
            }
            copy.count += 1
            return copy
        }

        /// The path to element `index` of the array at this path (which ends with a key).
        func appending(_ index: Int) -> Path {
            var copy = self
            switch count {
            case 1: copy.indices.0 = index
            case 3: copy.indices.1 = index
            default: return self  // Not a shape the decoder reads (see above).
            }
            copy.count += 1
            return copy
        }

        var jsonPath: JSONPath {
            let all: [JSONPath.Component] = [
                .key(keys.0.name), .index(indices.0), .key(keys.1.name), .index(indices.1), .key(keys.2.name),
            ]
            return JSONPath(components: Array(all.prefix(count)))
        }
    }

    private var scanner: JSONScanner
    private let limits: ResponseLimits

    init(bytes: UnsafeBufferPointer<UInt8>, limits: ResponseLimits) {
        self.scanner = JSONScanner(bytes: bytes)
        self.limits = limits
    }

    // MARK: Documents

    mutating func decodeCustomerGroups() throws(Failure) -> GetCustomerGroupsResponse {
        try checkSize()
        var groups: [GroupEntry]?
        try readObject(at: .root, depth: 1) { (decoder, key) throws(Failure) in
            guard key == .groups else { return false }
            groups = try decoder.readGroups()
            return true
        }
        try finish()
        guard let groups else { throw missingKey(.groups, in: Path.root, objectOffset: objectStart) }
        return GetCustomerGroupsResponse(groups: groups)
    }

    mutating func decodeGroupMembers() throws(Failure) -> GetGroupMembersResponse {
        try checkSize()
        var members: [GroupMemberEntry]?
        var hasMore: Bool?
        var token: String?
        try readObject(at: .root, depth: 1) { (decoder, key) throws(Failure) in
            let path = Path.root
            switch key {
            case .members:
                members = try decoder.readMembers()
            case .hasMore:
                hasMore = try decoder.readBool(at: path.appending(.hasMore))
            case .paginationToken:
                token = try decoder.readOptionalString(at: path.appending(.paginationToken))
            default:
                return false
            }
            return true
        }
        try finish()
        guard let members else { throw missingKey(.members, in: Path.root, objectOffset: objectStart) }
        guard let hasMore else { throw missingKey(.hasMore, in: Path.root, objectOffset: objectStart) }
        return GetGroupMembersResponse(members: members, hasMore: hasMore, paginationToken: token)
    }

    // MARK: Parts

    private mutating func readGroups() throws(Failure) -> [GroupEntry] {
        let path = Path.root.appending(.groups)
        var groups: [GroupEntry] = []
        try readArray(at: path, depth: 2) { (decoder, index) throws(Failure) in
            guard index < decoder.limits.maximumGroups else {
                throw decoder.limit("more than \(decoder.limits.maximumGroups) groups", at: path.appending(index))
            }
            groups.append(try decoder.readGroup(at: path.appending(index)))
        }
        return groups
    }

    private mutating func readGroup(at path: Path) throws(Failure) -> GroupEntry {
        var groupID: String?
        var groupType: String?
        var roles: [RoleEntry]?
        let start = scanner.position
        try readObject(at: path, depth: 3) { (decoder, key) throws(Failure) in
            switch key {
            case .groupId:
                groupID = try decoder.readString(at: path.appending(.groupId))
            case .groupType:
                groupType = try decoder.readString(at: path.appending(.groupType))
            case .roles:
                roles = try decoder.readRoles(at: path.appending(.roles))
            default:
                return false
            }
            return true
        }
        guard let groupID else { throw missingKey(.groupId, in: path, objectOffset: start) }
        guard let groupType else { throw missingKey(.groupType, in: path, objectOffset: start) }
        return GroupEntry(groupID: groupID, groupType: GroupType(rawValue: groupType), roles: roles ?? [])
    }

    /// Reads `roles`: an array of role entries, or `null` (treated as absent).
    private mutating func readRoles(at path: Path) throws(Failure) -> [RoleEntry]? {
        if scanner.peekByte() == UInt8(ascii: "n") {
            try readNull(at: path)
            return nil
        }
        var roles: [RoleEntry] = []
        try readArray(at: path, depth: 4) { (decoder, index) throws(Failure) in
            guard index < decoder.limits.maximumRoleEntriesPerGroup else {
                throw decoder.limit(
                    "more than \(decoder.limits.maximumRoleEntriesPerGroup) role entries in one group",
                    at: path.appending(index)
                )
            }
            roles.append(try decoder.readRole(at: path.appending(index)))
        }
        return roles
    }

    private mutating func readRole(at path: Path) throws(Failure) -> RoleEntry {
        var productID: String?
        var role: String?
        let start = scanner.position
        try readObject(at: path, depth: 5) { (decoder, key) throws(Failure) in
            switch key {
            case .productId:
                productID = try decoder.readString(at: path.appending(.productId))
            case .role:
                role = try decoder.readString(at: path.appending(.role))
            default:
                return false
            }
            return true
        }
        guard let productID else { throw missingKey(.productId, in: path, objectOffset: start) }
        guard let role else { throw missingKey(.role, in: path, objectOffset: start) }
        return RoleEntry(productID: productID, role: Role(rawValue: role))
    }

    private mutating func readMembers() throws(Failure) -> [GroupMemberEntry] {
        let path = Path.root.appending(.members)
        var members: [GroupMemberEntry] = []
        try readArray(at: path, depth: 2) { (decoder, index) throws(Failure) in
            guard index < decoder.limits.maximumMembers else {
                throw decoder.limit("more than \(decoder.limits.maximumMembers) members", at: path.appending(index))
            }
            let memberPath = path.appending(index)
            let start = decoder.scanner.position
            var transactionID: String?
            try decoder.readObject(at: memberPath, depth: 3) { (decoder, key) throws(Failure) in
                guard key == .appTransactionId else { return false }
                transactionID = try decoder.readString(at: memberPath.appending(.appTransactionId))
                return true
            }
            guard let transactionID else {
                throw decoder.missingKey(.appTransactionId, in: memberPath, objectOffset: start)
            }
            members.append(GroupMemberEntry(appTransactionID: transactionID))
        }
        return members
    }

    // MARK: Structure

    /// The offset of the root object, for "missing key" errors about it.
    private var objectStart: Int {
        var probe = JSONScanner(bytes: scanner.bytes)
        probe.skipWhitespace()
        return probe.position
    }

    private func checkSize() throws(Failure) {
        guard scanner.bytes.count <= limits.maximumBytes else {
            throw Failure(
                offset: 0,
                path: Path.root,
                message: "document of \(scanner.bytes.count) bytes is over the limit of \(limits.maximumBytes) bytes",
                isLimit: true
            )
        }
    }

    private mutating func finish() throws(Failure) {
        do {
            try scanner.expectEnd()
        } catch {
            throw Failure(offset: error.offset, path: Path.root, message: error.message, isSyntax: true)
        }
    }

    /// The keys of Apple's group documents; every other key is skipped.
    enum Key: Int {
        case groups, groupId, groupType, roles, productId, role, members, hasMore, paginationToken
        case appTransactionId, other

        /// The key as Apple spells it.
        var name: String {
            switch self {
            case .groups: "groups"
            case .groupId: "groupId"
            case .groupType: "groupType"
            case .roles: "roles"
            case .productId: "productId"
            case .role: "role"
            case .members: "members"
            case .hasMore: "hasMore"
            case .paginationToken: "paginationToken"
            case .appTransactionId: "appTransactionId"
            case .other: "?"
            }
        }
    }

    /// Reads a key and classifies it by its raw bytes; only a key with escapes is decoded first,
    /// so `"group\u0049d"` still counts as `groupId` and cannot slip a duplicate past the checks.
    private mutating func readKey() throws(JSONSyntaxError) -> Key {
        let (range, hasEscapes) = try scanner.readRawString()
        if hasEscapes {
            let text = try scanner.decodeString(from: range.lowerBound, to: range.upperBound)
            var utf8 = Array(text.utf8)
            return utf8.withUnsafeMutableBufferPointer { buffer in
                Self.classify(JSONScanner(bytes: UnsafeBufferPointer(buffer)), 0..<buffer.count)
            }
        }
        return Self.classify(scanner, range)
    }

    private static func classify(_ scanner: JSONScanner, _ range: Range<Int>) -> Key {
        switch range.count {
        case 4: if scanner.rawEquals(range, "role") { return .role }
        case 5: if scanner.rawEquals(range, "roles") { return .roles }
        case 6: if scanner.rawEquals(range, "groups") { return .groups }
        case 7:
            if scanner.rawEquals(range, "groupId") { return .groupId }
            if scanner.rawEquals(range, "members") { return .members }
            if scanner.rawEquals(range, "hasMore") { return .hasMore }
        case 9:
            if scanner.rawEquals(range, "groupType") { return .groupType }
            if scanner.rawEquals(range, "productId") { return .productId }
        case 15: if scanner.rawEquals(range, "paginationToken") { return .paginationToken }
        case 16: if scanner.rawEquals(range, "appTransactionId") { return .appTransactionId }
        default: break
        }
        return .other
    }

    /// Reads an object, handing each classified key to `member`, which reads the value and returns
    /// true, or returns false to have the value validated and skipped.
    ///
    /// A key `member` read once is a duplicate-key failure the second time, before its value is
    /// read; keys skipped may repeat.
    private mutating func readObject(
        at path: Path,
        depth: Int,
        _ member: (inout ResponseDecoder, Key) throws(Failure) -> Bool
    ) throws(Failure) {
        guard scanner.peekByte() == UInt8(ascii: "{") else { throw wrongType("an object", at: path) }
        guard depth <= limits.maximumDepth else { throw tooDeep(at: path) }
        scanner.position += 1
        if scanner.peekByte() == UInt8(ascii: "}") {
            scanner.position += 1
            return
        }
        var read: UInt16 = 0
        repeat {
            scanner.skipWhitespace()
            let keyOffset = scanner.position
            guard scanner.peekByte() == UInt8(ascii: "\"") else {
                throw Failure(
                    offset: keyOffset,
                    path: path,
                    message: "expected a string key, found \(scanner.describeCurrent())",
                    isSyntax: true
                )
            }
            let key: Key
            do {
                key = try readKey()
                try scanner.expect(UInt8(ascii: ":"), "':' after the key")
            } catch {
                throw Failure(offset: error.offset, path: path, message: error.message, isSyntax: true)
            }
            let bit: UInt16 = 1 << UInt16(key.rawValue)
            guard read & bit == 0 else { throw duplicateKey(key, at: keyOffset, in: path) }
            if try member(&self, key) {
                read |= bit
            } else {
                do {
                    try scanner.skipValue(depth: depth, maximumDepth: limits.maximumDepth)
                } catch {
                    throw Failure(offset: error.offset, path: path, message: error.message, isSyntax: true)
                }
            }
        } while try commaOrClose(UInt8(ascii: "}"), "}", at: path)
    }

    private mutating func readArray(
        at path: Path,
        depth: Int,
        _ element: (inout ResponseDecoder, Int) throws(Failure) -> Void
    ) throws(Failure) {
        guard scanner.peekByte() == UInt8(ascii: "[") else { throw wrongType("an array", at: path) }
        guard depth <= limits.maximumDepth else { throw tooDeep(at: path) }
        scanner.position += 1
        if scanner.peekByte() == UInt8(ascii: "]") {
            scanner.position += 1
            return
        }
        var index = 0
        repeat {
            try element(&self, index)
            index += 1
        } while try commaOrClose(UInt8(ascii: "]"), "]", at: path)
    }

    private mutating func commaOrClose(_ close: UInt8, _ what: String, at path: Path) throws(Failure) -> Bool {
        do {
            return try scanner.commaOrClose(close, what)
        } catch {
            throw Failure(offset: error.offset, path: path, message: error.message, isSyntax: true)
        }
    }

    // MARK: Scalars

    private mutating func readString(at path: Path) throws(Failure) -> String {
        guard scanner.peekByte() == UInt8(ascii: "\"") else { throw wrongType("a string", at: path) }
        do {
            return try scanner.readString()
        } catch {
            throw Failure(offset: error.offset, path: path, message: error.message, isSyntax: true)
        }
    }

    private mutating func readOptionalString(at path: Path) throws(Failure) -> String? {
        if scanner.peekByte() == UInt8(ascii: "n") {
            try readNull(at: path)
            return nil
        }
        return try readString(at: path)
    }

    private mutating func readBool(at path: Path) throws(Failure) -> Bool {
        guard let byte = scanner.peekByte(), byte == UInt8(ascii: "t") || byte == UInt8(ascii: "f") else {
            throw wrongType("a boolean", at: path)
        }
        do {
            guard case .bool(let value) = try scanner.readLiteral() else { throw wrongType("a boolean", at: path) }
            return value
        } catch let error as JSONSyntaxError {
            throw Failure(offset: error.offset, path: path, message: error.message, isSyntax: true)
        } catch {
            throw wrongType("a boolean", at: path)
        }
    }

    private mutating func readNull(at path: Path) throws(Failure) {
        do {
            guard case .null = try scanner.readLiteral() else { throw wrongType("null", at: path) }
        } catch let error as JSONSyntaxError {
            throw Failure(offset: error.offset, path: path, message: error.message, isSyntax: true)
        } catch {
            throw wrongType("null", at: path)
        }
    }

    // MARK: Errors

    private mutating func wrongType(_ expected: String, at path: Path) -> Failure {
        let found: String
        guard let byte = scanner.peekByte() else {
            return Failure(
                offset: scanner.position,
                path: path,
                message: "expected \(expected), found end of input",
                isSyntax: true
            )
        }
        // Named by its first byte only if the value there is JSON: text such as `this is not JSON`
        // starts with a `t` but is no boolean, and is reported as what it is.
        var probe = scanner
        do {
            try probe.skipValue(depth: 0, maximumDepth: limits.maximumDepth)
        } catch {
            return Failure(offset: error.offset, path: path, message: error.message, isSyntax: true)
        }
        switch byte {
        case UInt8(ascii: "{"): found = "an object"
        case UInt8(ascii: "["): found = "an array"
        case UInt8(ascii: "\""): found = "a string"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): found = "a boolean"
        case UInt8(ascii: "n"): found = "null"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): found = "a number"
        default: found = scanner.describeCurrent()
        }
        return Failure(offset: scanner.position, path: path, message: "expected \(expected), found \(found)")
    }

    private func missingKey(_ key: Key, in path: Path, objectOffset: Int) -> Failure {
        Failure(offset: objectOffset, path: path.appending(key), message: "missing required key '\(key.name)'")
    }

    private func duplicateKey(_ key: Key, at offset: Int, in path: Path) -> Failure {
        Failure(offset: offset, path: path.appending(key), message: "duplicate key '\(key.name)'")
    }

    private func tooDeep(at path: Path) -> Failure {
        Failure(offset: scanner.position, path: path, message: "nesting deeper than \(limits.maximumDepth) levels")
    }

    private func limit(_ message: String, at path: Path) -> Failure {
        Failure(offset: scanner.position, path: path, message: message, isLimit: true)
    }
}
