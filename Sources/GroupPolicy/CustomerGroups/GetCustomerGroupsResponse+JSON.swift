extension GetCustomerGroupsResponse {
    /// Decodes Apple's JSON body strictly and fast.
    ///
    /// A missing `roles` (or `null`) is an empty list; unknown keys are skipped, since Apple may add
    /// fields; unknown `groupType` and `role` values keep their raw string. A missing `groups`,
    /// `groupId`, `groupType`, `productId` or `role`, a wrong JSON type, a duplicate key, invalid
    /// JSON or UTF-8, or input over `limits` throws a ``GroupPolicyError`` naming the JSON path,
    /// line and column.
    ///
    /// - Parameters:
    ///   - jsonBytes: The body as Apple sent it.
    ///   - limits: Bounds on size, groups, role entries and nesting.
    ///   - fileName: The name errors print, when the bytes came from a file.
    /// - Throws: A ``GroupPolicyError`` with code `invalidResponse` (or `limitExceeded`).
    @inlinable
    public init(
        jsonBytes: some Collection<UInt8>,
        limits: ResponseLimits = .default,
        fileName: String? = nil
    ) throws(GroupPolicyError) {
        // Inlinable so that callers' byte collections (usually `[UInt8]`) are specialised: a
        // generic call through witness tables costs as much as decoding a small response.
        let decode = { (buffer: UnsafeBufferPointer<UInt8>) in
            Self.decoded(from: buffer, limits: limits, fileName: fileName)
        }
        let result =
            jsonBytes.withContiguousStorageIfAvailable(decode) ?? Array(jsonBytes).withUnsafeBufferPointer(decode)
        self = try result.get()
    }

    /// The response in `bytes`: the plain form in one pass, anything else (and every error) from
    /// the reference decoder.
    @usableFromInline
    static func decoded(
        from bytes: UnsafeBufferPointer<UInt8>,
        limits: ResponseLimits,
        fileName: String?
    ) -> Result<GetCustomerGroupsResponse, GroupPolicyError> {
        if var plain = PlainResponseDecoder(bytes: bytes, limits: limits), let response = plain.decodeCustomerGroups() {
            return .success(response)
        }
        return decodeDocument(bytes, limits: limits, fileName: fileName) { decoder throws(ResponseDecoder.Failure) in
            try decoder.decodeCustomerGroups()
        }
    }

    /// Apple's compact JSON shape (keys in Apple's order; `roles` omitted when empty).
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(pretty: false)
        write(to: &writer)
        return writer.output
    }

    /// Apple's JSON shape as text, compact or pretty.
    public func jsonString(pretty: Bool = false) -> String {
        var writer = JSONWriter(pretty: pretty)
        write(to: &writer)
        return writer.string
    }

    package func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("groups")
        writer.beginArray()
        for group in groups {
            writer.beginObject()
            writer.member("groupId", group.groupID)
            writer.member("groupType", group.groupType.rawValue)
            if !group.roles.isEmpty {
                writer.key("roles")
                writer.beginArray()
                for entry in group.roles {
                    writer.beginObject()
                    writer.member("productId", entry.productID)
                    writer.member("role", entry.role.rawValue)
                    writer.endObject()
                }
                writer.endArray()
            }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
    }
}

extension GetGroupMembersResponse {
    /// Decodes Apple's JSON body strictly.
    ///
    /// `members` and `hasMore` are required, `paginationToken` optional; unknown keys are skipped.
    ///
    /// - Parameters:
    ///   - jsonBytes: The body as Apple sent it.
    ///   - limits: Bounds on size, members and nesting.
    ///   - fileName: The name errors print, when the bytes came from a file.
    /// - Throws: A ``GroupPolicyError`` with code `invalidResponse` (or `limitExceeded`) naming the
    ///   JSON path.
    @inlinable
    public init(
        jsonBytes: some Collection<UInt8>,
        limits: ResponseLimits = .default,
        fileName: String? = nil
    ) throws(GroupPolicyError) {
        let decode = { (buffer: UnsafeBufferPointer<UInt8>) in
            Self.decoded(from: buffer, limits: limits, fileName: fileName)
        }
        let result =
            jsonBytes.withContiguousStorageIfAvailable(decode) ?? Array(jsonBytes).withUnsafeBufferPointer(decode)
        self = try result.get()
    }

    /// The page in `bytes`: the plain form in one pass, anything else (and every error) from the
    /// reference decoder.
    @usableFromInline
    static func decoded(
        from bytes: UnsafeBufferPointer<UInt8>,
        limits: ResponseLimits,
        fileName: String?
    ) -> Result<GetGroupMembersResponse, GroupPolicyError> {
        if var plain = PlainResponseDecoder(bytes: bytes, limits: limits), let page = plain.decodeGroupMembers() {
            return .success(page)
        }
        return decodeDocument(bytes, limits: limits, fileName: fileName) { decoder throws(ResponseDecoder.Failure) in
            try decoder.decodeGroupMembers()
        }
    }

    /// Apple's compact JSON shape.
    public func jsonBytes() -> [UInt8] {
        var writer = JSONWriter(pretty: false)
        write(to: &writer)
        return writer.output
    }

    /// Apple's JSON shape as text, compact or pretty.
    public func jsonString(pretty: Bool = false) -> String {
        var writer = JSONWriter(pretty: pretty)
        write(to: &writer)
        return writer.string
    }

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("members")
        writer.beginArray()
        for member in members {
            writer.beginObject()
            writer.member("appTransactionId", member.appTransactionID)
            writer.endObject()
        }
        writer.endArray()
        writer.key("hasMore")
        writer.bool(hasMore)
        if let paginationToken { writer.member("paginationToken", paginationToken) }
        writer.endObject()
    }
}

/// Runs the reference decoder over `bytes` and turns its failure into a located error.
private func decodeDocument<Document>(
    _ bytes: UnsafeBufferPointer<UInt8>,
    limits: ResponseLimits,
    fileName: String?,
    _ decode: (inout ResponseDecoder) throws(ResponseDecoder.Failure) -> Document
) -> Result<Document, GroupPolicyError> {
    var decoder = ResponseDecoder(bytes: bytes, limits: limits)
    do throws(ResponseDecoder.Failure) {
        return .success(try decode(&decoder))
    } catch {
        let source = SourceText(fileName: fileName, bytes: Array(bytes))
        var located = GroupPolicyError(
            code: error.isLimit ? .limitExceeded : .invalidResponse,
            message: error.message,
            location: source.location(ofOffset: error.offset),
            jsonPath: error.path.description
        )
        located.isSyntaxError = error.isSyntax
        return .failure(located)
    }
}
