import GroupPolicy
import GroupPolicyBasics

extension PolicyWorkbench {
    /// A response file a test case of the directory names, as the playground offers it.
    public struct ResponseFile: Sendable, Hashable {
        /// The path as resolved against its test file, without `.` and `dir/..` steps
        /// (`Policies/../Examples/a.json` is `Examples/a.json`).
        public var name: String
        /// The file's text, or `nil` when it was refused or could not be read.
        public var text: String?
        /// Why there is no text: the line `test` prints for the case (a file outside the test
        /// file's project, a FIFO, a missing file), or `nil`.
        public var problem: String?
    }

    /// The most response files ``responseFiles()`` reads: what a page shows in a menu.
    public static let maximumResponseFiles = 64

    /// The most bytes the response files ``responseFiles()`` reads hold together: 16 MiB.
    public static let maximumResponseBytes = 16 << 20

    /// The `responseFile` of every case of every test file that `test DIR` runs, each once (by its
    /// name), sorted by name, read by the rule `test` reads them by (the DocC article "Policy test
    /// file format", section "Response files"): never waiting on a FIFO, never outside the test
    /// file's project unless the workbench allows it.
    ///
    /// A test file that does not read or parse names none. At most ``maximumResponseFiles`` files
    /// are read, and ``maximumResponseBytes`` bytes together; past either, the rest are listed with
    /// the problem and no text.
    ///
    /// - Returns: The response files, read or with the line saying why not.
    public func responseFiles() -> [ResponseFile] {
        let access = ResponseFileAccess(allowsOutside: allowsResponseFilesOutside)
        let testFiles = (try? PolicyFiles.testFiles(under: [directory])) ?? []
        // By name: the first test file naming it decides whose project it is read in.
        var named: [String: (path: String, project: String)] = [:]
        for testFile in testFiles {
            guard let bytes = try? BoundedFileReader.read(testFile, maximumBytes: PolicyLimits.default.maximumBytes)
            else { continue }
            let collector = DiagnosticCollector(source: SourceText(fileName: testFile, bytes: bytes))
            guard let root = readJSON(collector, limits: .default), case .object(let members) = root.value,
                case .array(let cases)? = members.first(where: { $0.key == "cases" })?.value.value
            else { continue }
            var project: String?
            for testCase in cases {
                guard case .object(let fields) = testCase.value,
                    case .string(let written)? = fields.first(where: { $0.key == "responseFile" })?.value.value
                else { continue }
                let path = resolve(written, against: testFile)
                let name = Self.tidied(path)
                guard named[name] == nil else { continue }
                if project == nil { project = ResponseFileAccess.project(ofTestFile: testFile) }
                named[name] = (path, project ?? "")
            }
        }
        var files: [ResponseFile] = []
        var totalBytes = 0
        for (name, file) in named.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            guard files.count < Self.maximumResponseFiles, totalBytes <= Self.maximumResponseBytes else {
                let problem =
                    "not read: the playground offers at most \(Self.maximumResponseFiles) response files "
                    + "and \(Self.maximumResponseBytes) bytes of them"
                files.append(ResponseFile(name: name, text: nil, problem: problem))
                continue
            }
            do throws(ResponseFileAccess.Failure) {
                let bytes = try access.read(file.path, project: file.project)
                totalBytes += bytes.count
                files.append(ResponseFile(name: name, text: String(decoding: bytes, as: UTF8.self), problem: nil))
            } catch {
                switch error {
                case .refused(let line):
                    files.append(ResponseFile(name: name, text: nil, problem: line))
                case .failed(let failure):
                    let line = "response file '\(file.path)' does not load: \(failure.message)"
                    files.append(ResponseFile(name: name, text: nil, problem: line))
                }
            }
        }
        return files
    }

    /// The path without `.` and `dir/..` steps (a `..` at the start of a relative path stays): the
    /// name ``ResponseFile/name`` shows, while the file is read at the path as resolved.
    ///
    /// - Parameter path: A path as written or resolved.
    /// - Returns: The same path, tidied.
    public static func tidied(_ path: String) -> String {
        ResponseFileAccess.tidied(path)
    }
}
