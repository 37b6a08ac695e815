package import GroupPolicyBasics

extension GetCustomerGroupsResponse: AppleJSONDocument {
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
        self = try withContiguousBytes(jsonBytes) { Self.decoded(from: $0, limits: limits, fileName: fileName) }.get()
    }

    /// The response in `bytes` (see ``decodedDocument(_:limits:fileName:plain:reference:)``).
    @usableFromInline
    static func decoded(
        from bytes: UnsafeBufferPointer<UInt8>,
        limits: ResponseLimits,
        fileName: String?
    ) -> Result<GetCustomerGroupsResponse, GroupPolicyError> {
        decodedDocument(bytes, limits: limits, fileName: fileName) {
            $0.decodeCustomerGroups()
        } reference: {
            decoder throws(ResponseDecoder.Failure) in
            try decoder.decodeCustomerGroups()
        }
    }

    /// Apple's compact JSON shape (keys in Apple's order; `roles` omitted when empty).
    public func jsonBytes() -> [UInt8] { written(pretty: false).output }

    /// Apple's JSON shape as text, compact or pretty.
    public func jsonString(pretty: Bool = false) -> String { written(pretty: pretty).string }

    package func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("groups", objects: groups) { writer, group in
            writer.member("groupId", group.groupID)
            writer.member("groupType", group.groupType.rawValue)
            if !group.roles.isEmpty {
                writer.member("roles", objects: group.roles) { writer, entry in
                    writer.member("productId", entry.productID)
                    writer.member("role", entry.role.rawValue)
                }
            }
        }
        writer.endObject()
    }
}

extension GetGroupMembersResponse: AppleJSONDocument {
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
        self = try withContiguousBytes(jsonBytes) { Self.decoded(from: $0, limits: limits, fileName: fileName) }.get()
    }

    /// The page in `bytes` (see ``decodedDocument(_:limits:fileName:plain:reference:)``).
    @usableFromInline
    static func decoded(
        from bytes: UnsafeBufferPointer<UInt8>,
        limits: ResponseLimits,
        fileName: String?
    ) -> Result<GetGroupMembersResponse, GroupPolicyError> {
        decodedDocument(bytes, limits: limits, fileName: fileName) {
            $0.decodeGroupMembers()
        } reference: {
            decoder throws(ResponseDecoder.Failure) in
            try decoder.decodeGroupMembers()
        }
    }

    /// Apple's compact JSON shape.
    public func jsonBytes() -> [UInt8] { written(pretty: false).output }

    /// Apple's JSON shape as text, compact or pretty.
    public func jsonString(pretty: Bool = false) -> String { written(pretty: pretty).string }

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("members", objects: members) { $0.member("appTransactionId", $1.appTransactionID) }
        writer.key("hasMore")
        writer.bool(hasMore)
        if let paginationToken { writer.member("paginationToken", paginationToken) }
        writer.endObject()
    }
}

/// Apple's two JSON documents: one way to write them.
protocol AppleJSONDocument {
    /// Writes Apple's JSON shape of the document.
    func write(to writer: inout JSONWriter)
}

extension AppleJSONDocument {
    /// The document written, compact or pretty.
    func written(pretty: Bool) -> JSONWriter {
        var writer = JSONWriter(pretty: pretty)
        write(to: &writer)
        return writer
    }
}

/// Calls `body` with the bytes, contiguous: in place when the collection stores them so (a
/// `[UInt8]`, usually), otherwise copied once.
///
/// Inlinable so that callers' byte collections are specialised: a generic call through witness
/// tables costs as much as decoding a small response.
@inlinable
func withContiguousBytes<Result>(
    _ bytes: some Collection<UInt8>,
    _ body: (UnsafeBufferPointer<UInt8>) -> Result
) -> Result {
    bytes.withContiguousStorageIfAvailable(body) ?? Array(bytes).withUnsafeBufferPointer(body)
}

/// A document in `bytes`: the plain form in one pass (`plain`), anything else, and every error,
/// from the reference decoder (`reference`), its failure turned into a located error.
func decodedDocument<Document>(
    _ bytes: UnsafeBufferPointer<UInt8>,
    limits: ResponseLimits,
    fileName: String?,
    plain: (inout PlainResponseDecoder) -> Document?,
    reference: (inout ResponseDecoder) throws(ResponseDecoder.Failure) -> Document
) -> Result<Document, GroupPolicyError> {
    if var decoder = PlainResponseDecoder(bytes: bytes, limits: limits), let document = plain(&decoder) {
        return .success(document)
    }
    var decoder = ResponseDecoder(bytes: bytes, limits: limits)
    do throws(ResponseDecoder.Failure) {
        return .success(try reference(&decoder))
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
