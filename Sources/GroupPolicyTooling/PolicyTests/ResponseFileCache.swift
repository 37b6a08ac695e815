import GroupPolicy
import GroupPolicyBasics

/// The responses of one test file's `responseFile`s, each read and decoded once however many cases
/// share it: a decoded response is a value whose storage the cases then share.
///
/// Keyed by the file's device and inode, so `a.json`, `./a.json`, a symbolic link and a hard link
/// to it are one file. Every file is read through ``ResponseFileAccess``: a file outside the test
/// file's project, or one that is not a regular file, is refused unread.
struct ResponseFileCache {
    /// What a `responseFile` gave: the response, or the whole line saying why there is none.
    typealias Outcome = Result<GetCustomerGroupsResponse, ResponseFileAccess.Failure>

    /// By file identity, else by path, compared by bytes (as the file system compares names).
    private var responses: [ExactName: Outcome] = [:]

    /// How many files were read (successfully or not).
    private(set) var filesRead = 0
    /// Their bytes together.
    private var bytesRead = 0
    /// Which files may be read.
    private let access: ResponseFileAccess
    /// The directory tree the test file's response files must be in.
    private let project: String

    /// The most bytes one test file's distinct response files may hold together: 32 MiB.
    ///
    /// That is what the test file itself may hold. Each is at most 1 MiB, but a test file of thousands of cases can
    /// name thousands of them, and their decoded responses are kept while the file runs.
    static let maximumTotalBytes = 32 << 20

    /// A cache for the test file at `testFile` (`nil` for bytes from memory).
    init(testFile: String?, access: ResponseFileAccess) {
        self.access = access
        project = ResponseFileAccess.project(ofTestFile: testFile)
    }

    /// The response in the file at `path` (resolved against the test file already), read with the
    /// response size limit.
    mutating func response(at path: String) -> Outcome {
        // Checked for each path (a refusal names the path written), read once per file.
        let resolved: String
        do throws(ResponseFileAccess.Failure) {
            resolved = try access.check(path, project: project)
        } catch {
            return .failure(error)
        }
        let key = ExactName(fileIdentity(resolved).map { "\($0.device):\($0.inode)" } ?? resolved)
        if let known = responses[key] { return known }
        let limit = Self.maximumTotalBytes
        guard bytesRead <= limit else {
            // Over the limit already: refused without reading.
            return .failure(.failed(Self.overTheLimit(limit)))
        }
        filesRead += 1
        let result = Result { () throws(ResponseFileAccess.Failure) in
            let bytes = try access.read(path, resolved: resolved, project: project)
            bytesRead += bytes.count
            guard bytesRead <= limit else { throw .failed(Self.overTheLimit(limit)) }
            do {
                return try GetCustomerGroupsResponse(jsonBytes: bytes, fileName: path)
            } catch let error as GroupPolicyError {
                throw .failed(error)
            } catch {
                throw .failed(GroupPolicyError(code: .invalidResponse, message: "\(error)"))
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
