import GroupPolicy
import GroupPolicyBasics

/// The responses of one test file's `responseFile`s, each read and decoded once however many cases
/// share it: a decoded response is a value whose storage the cases then share.
///
/// Keyed by the file's device and inode, so `a.json`, `./a.json`, a symbolic link and a hard link
/// to it are one file.
struct ResponseFileCache {
    /// By file identity, else by path, compared by bytes (as the file system compares names).
    private var responses: [ExactName: Result<GetCustomerGroupsResponse, GroupPolicyError>] = [:]

    /// How many files were read (successfully or not).
    private(set) var filesRead = 0
    /// Their bytes together.
    private var bytesRead = 0

    /// The most bytes one test file's distinct response files may hold together: 32 MiB.
    ///
    /// That is what the test file itself may hold. Each is at most 1 MiB, but a test file of thousands of cases can
    /// name thousands of them, and their decoded responses are kept while the file runs.
    static let maximumTotalBytes = 32 << 20

    /// The response in the file at `path` (resolved against the test file already), read with the
    /// response size limit.
    mutating func response(at path: String) -> Result<GetCustomerGroupsResponse, GroupPolicyError> {
        let key = ExactName(fileIdentity(path).map { "\($0.device):\($0.inode)" } ?? realPath(path) ?? path)
        if let known = responses[key] { return known }
        let limit = Self.maximumTotalBytes
        guard bytesRead <= limit else {
            // Over the limit already: refused without reading.
            return .failure(Self.overTheLimit(limit))
        }
        filesRead += 1
        let result = Result { () throws(GroupPolicyError) in
            let bytes = try BoundedFileReader.read(path, maximumBytes: ResponseLimits.default.maximumBytes)
            bytesRead += bytes.count
            guard bytesRead <= limit else { throw Self.overTheLimit(limit) }
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

    private static func overTheLimit(_ limit: Int) -> GroupPolicyError {
        GroupPolicyError(
            code: .limitExceeded,
            message: "the test file's response files hold more than \(limit) bytes together, over the limit of "
                + "\(limit) bytes"
        )
    }
}
