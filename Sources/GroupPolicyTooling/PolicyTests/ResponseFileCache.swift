import GroupPolicy

/// The responses of one test file's `responseFile`s, each read and decoded once however many cases
/// share it: a decoded response is a value whose storage the cases then share.
///
/// Keyed by the file's real path, so `a.json` and `./a.json` (or a link to it) are one file.
struct ResponseFileCache {
    private var responses: [String: Result<GetCustomerGroupsResponse, GroupPolicyError>] = [:]

    /// How many files were read (successfully or not).
    private(set) var filesRead = 0

    /// The response in the file at `path` (resolved against the test file already), read with the
    /// response size limit.
    mutating func response(at path: String) -> Result<GetCustomerGroupsResponse, GroupPolicyError> {
        let key = realPath(path) ?? path
        if let known = responses[key] { return known }
        filesRead += 1
        let result = Result { () throws(GroupPolicyError) in
            let bytes = try BoundedFileReader.read(path, maximumBytes: ResponseLimits.default.maximumBytes)
            do {
                return try GetCustomerGroupsResponse(jsonBytes: bytes, fileName: path)
            } catch let error as GroupPolicyError {
                throw error
            } catch {
                throw GroupPolicyError(code: .invalidResponse, message: "\(error)")
            }
        }
        responses[key] = result
        return result
    }
}
