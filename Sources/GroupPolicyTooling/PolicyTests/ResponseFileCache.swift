import GroupPolicy

/// The responses of one test file's `responseFile`s, each read and decoded once however many cases
/// share it: a decoded response is a value whose storage the cases then share.
///
/// Keyed by the file's device and inode, so `a.json`, `./a.json`, a symbolic link and a hard link
/// to it are one file. The distinct files together hold at most `maximumTotalBytes` (the test
/// file limit): a test file's responses cost no more than it could hold inline, however many
/// paths or links name them.
struct ResponseFileCache {
    private var responses: [String: Result<GetCustomerGroupsResponse, GroupPolicyError>] = [:]

    /// How many files were read (successfully or not).
    private(set) var filesRead = 0

    /// The bytes of every distinct file read so far.
    private(set) var totalBytes = 0

    /// The most bytes the distinct files may hold together.
    let maximumTotalBytes: Int

    init(maximumTotalBytes: Int) {
        self.maximumTotalBytes = maximumTotalBytes
    }

    /// The response in the file at `path` (resolved against the test file already), read with the
    /// response size limit.
    mutating func response(at path: String) -> Result<GetCustomerGroupsResponse, GroupPolicyError> {
        let key = fileIdentity(path).map { "\($0.device):\($0.inode)" } ?? realPath(path) ?? path
        if let known = responses[key] { return known }
        filesRead += 1
        let limit = maximumTotalBytes
        let result = Result { () throws(GroupPolicyError) in
            let bytes = try BoundedFileReader.read(path, maximumBytes: ResponseLimits.default.maximumBytes)
            totalBytes += bytes.count
            guard totalBytes <= limit else {
                throw GroupPolicyError(
                    code: .limitExceeded,
                    message: "the response files of one test file hold \(totalBytes) bytes or more together, "
                        + "over the limit of \(limit) bytes"
                )
            }
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
