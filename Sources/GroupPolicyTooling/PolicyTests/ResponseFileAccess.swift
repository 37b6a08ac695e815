import GroupPolicy
import GroupPolicyBasics

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Which files a test case's `responseFile` may name, and how they are read: the rule of the DocC
/// article "Policy test file format", section "Response files".
///
/// A response file is a file of the test file's *project*: a regular file (its symbolic links
/// resolved) inside the project's directory tree, which is
///
/// - the Git work tree the test file is in (the nearest directory above it holding `.git`);
/// - outside Git, the parent of the test file's directory (`Policies/x.tests.json` may name
///   `../Examples/r.json`, in a copy of a repository as in the repository);
/// - the test file's own directory when either of those is a shared directory: the file system's
///   root, the home directory, the temporary directory (`TMPDIR`), or one anyone may write to
///   (`/tmp`), whose other files belong to no project.
///
/// Anything else is refused before it is opened, with one line naming the file and the rule: a
/// path outside the tree (absolute, `..`, or a symbolic link leading out), a FIFO, a device, a
/// socket, a directory. A file is opened only once it is known to be a regular file, without
/// waiting (a FIFO swapped in since is refused too), and read within the response limit, so no
/// test file can make `check`, `test` or the playground wait. ``allowsOutside`` lifts the tree
/// (`--allow-outside`), never the rest.
struct ResponseFileAccess: Sendable {
    /// Whether a response file may lie outside its test file's project.
    var allowsOutside = false

    /// The directory tree a test file's response files must be in (a real path): see the type.
    ///
    /// - Parameter testFile: The test file's path, or `nil` for bytes from memory (whose relative
    ///   paths resolve against the current directory, which is then its directory).
    /// - Returns: The project's real path.
    static func project(ofTestFile testFile: String?) -> String {
        let written = testFile.flatMap { file in file.lastIndex(of: "/").map { String(file[..<$0]) } }
        let directory = realPath(written.map { $0.isEmpty ? "/" : $0 } ?? ".") ?? written ?? "."
        var candidate = directory
        while true {
            var info = stat()
            if lstat(candidate == "/" ? "/.git" : candidate + "/.git", &info) == 0 {
                if !isShared(candidate) { return candidate }
                break
            }
            guard let up = parent(of: candidate) else { break }
            candidate = up
        }
        if let up = parent(of: directory), !isShared(up) { return up }
        return directory
    }

    /// The directory holding `path` (a real path), or `nil` for the root.
    private static func parent(of path: String) -> String? {
        guard path != "/", let slash = path.lastIndex(of: "/") else { return nil }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Whether a directory holds other people's or other projects' files: the root, the home
    /// directory, the temporary directory, or one anyone may write to.
    private static func isShared(_ directory: String) -> Bool {
        if directory == "/" { return true }
        for variable in ["HOME", "TMPDIR"] {
            if let value = getenv(variable), let shared = realPath(String(cString: value)), shared == directory {
                return true
            }
        }
        var info = stat()
        return stat(directory, &info) == 0 && Int(info.st_mode) & Int(S_IWOTH) != 0
    }

    /// Whether `path` is `directory` or inside it (both real paths).
    static func contains(_ directory: String, _ path: String) -> Bool {
        path == directory || directory == "/" || path.hasPrefix(directory + "/")
    }

    /// Why a response file gives no bytes.
    enum Failure: Error {
        /// Refused by the rule before it was read: the whole line, naming the file and the rule.
        case refused(String)
        /// It could not be read (missing, unreadable, over the limit).
        case failed(GroupPolicyError)
    }

    /// Checks that the response file `path` names may be read by a test file of `project`.
    ///
    /// - Parameters:
    ///   - path: The `responseFile`, resolved against the test file's directory as written.
    ///   - project: ``project(ofTestFile:)`` of the test file.
    /// - Returns: The file's real path, to read with ``read(_:resolved:project:)``.
    /// - Throws: ``Failure/refused(_:)`` for a file outside the project (unless allowed);
    ///   ``Failure/failed(_:)`` for one that does not exist.
    func check(_ path: String, project: String) throws(Failure) -> String {
        guard let resolved = realPath(path) else {
            throw .failed(GroupPolicyError(code: .unreadableFile, message: "cannot read \(path): no such file"))
        }
        guard allowsOutside || Self.contains(project, resolved) else {
            let written = Self.tidied(Self.absolute(path))
            let place = "\(project), the project of its test file"
            let what =
                Self.contains(project, written)
                ? "leads outside \(place), to \(resolved)" : "is outside \(place)"
            throw .refused(
                "response file '\(path)' \(what) (a responseFile must be a regular file in it; check, test and "
                    + "playground take --allow-outside)"
            )
        }
        return resolved
    }

    /// Reads a response file ``check(_:project:)`` let through, or refuses it when it is not a
    /// regular file.
    ///
    /// - Parameters:
    ///   - path: The `responseFile`, as messages name it.
    ///   - resolved: Its real path.
    ///   - project: ``project(ofTestFile:)`` of the test file.
    /// - Returns: The file's bytes, at most the response limit.
    /// - Throws: ``Failure/refused(_:)`` for a FIFO, a device, a socket or a directory, unopened;
    ///   ``Failure/failed(_:)`` for a file that cannot be read or is over the limit.
    func read(_ path: String, resolved: String, project: String) throws(Failure) -> [UInt8] {
        do {
            return try BoundedFileReader.readRegularFile(
                resolved,
                name: path,
                maximumBytes: ResponseLimits.default.maximumBytes
            )
        } catch {
            guard error.code == .unreadableFile, error.message.hasSuffix("not a regular file") else {
                throw .failed(error)
            }
            // "PATH is a FIFO, not a regular file", as the reader words it.
            let kind = error.message.hasPrefix(path) ? String(error.message.dropFirst(path.count)) : " " + error.message
            throw .refused(
                "response file '\(path)'\(kind) (a responseFile must be a regular file in \(project), the project "
                    + "of its test file)"
            )
        }
    }

    /// ``check(_:project:)``, then ``read(_:resolved:project:)``.
    func read(_ path: String, project: String) throws(Failure) -> [UInt8] {
        try read(path, resolved: try check(path, project: project), project: project)
    }

    /// The path made absolute against the current directory.
    private static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/"), let current = realPath(".") else { return path }
        return current + "/" + path
    }

    /// The path without `.` and `dir/..` steps, symbolic links left as they are (a `..` at the
    /// start of a relative path stays): how a path reads, while it is resolved as written.
    static func tidied(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." {
            if part == "..", let last = parts.last, last != ".." {
                parts.removeLast()
            } else if part == "..", path.hasPrefix("/") {
                continue  // `/..` is `/`.
            } else {
                parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        return path.hasPrefix("/") ? "/" + joined : joined
    }
}
