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
    public init(
        jsonBytes: some Collection<UInt8>,
        limits: ResponseLimits = .default,
        fileName: String? = nil
    ) throws(GroupPolicyError) {
        self = try decodeDocument(jsonBytes, limits: limits, fileName: fileName) {
            decoder throws(ResponseDecoder.Failure) in
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
    public init(
        jsonBytes: some Collection<UInt8>,
        limits: ResponseLimits = .default,
        fileName: String? = nil
    ) throws(GroupPolicyError) {
        self = try decodeDocument(jsonBytes, limits: limits, fileName: fileName) {
            decoder throws(ResponseDecoder.Failure) in
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

/// Runs a response decoder over contiguous bytes and turns its failure into a located error.
private func decodeDocument<Bytes: Collection<UInt8>, Document>(
    _ bytes: Bytes,
    limits: ResponseLimits,
    fileName: String?,
    _ decode: (inout ResponseDecoder) throws(ResponseDecoder.Failure) -> Document
) throws(GroupPolicyError) -> Document {
    func run(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<Document, ResponseDecoder.Failure> {
        var decoder = ResponseDecoder(bytes: buffer, limits: limits)
        do throws(ResponseDecoder.Failure) {
            return .success(try decode(&decoder))
        } catch {
            return .failure(error)
        }
    }
    let result =
        bytes.withContiguousStorageIfAvailable(run)
        ?? Array(bytes).withUnsafeBufferPointer(run)
    switch result {
    case .success(let document):
        return document
    case .failure(let failure):
        let source = SourceText(fileName: fileName, bytes: Array(bytes))
        var error = GroupPolicyError(
            code: failure.isLimit ? .limitExceeded : .invalidResponse,
            message: failure.message,
            location: source.location(ofOffset: failure.offset),
            jsonPath: failure.path.description
        )
        error.isSyntaxError = failure.isSyntax
        throw error
    }
}
