#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The package root, found from this file's path (tests read `Policies/` and `Examples/`).
package let packageRoot: String = {
    var path = #filePath
    for _ in 0..<3 {
        guard let slash = path.lastIndex(of: "/") else { break }
        path = String(path[..<slash])
    }
    return path
}()

/// The absolute path of a file given relative to the package root.
package func repositoryFile(_ relative: String) -> String { packageRoot + "/" + relative }

/// A new, empty directory under the system's temporary directory; the caller removes it.
package func makeTemporaryDirectory(_ prefix: String) throws -> String {
    let directory = FileManager.default.temporaryDirectory.path + "/\(prefix)-\(UInt64.random(in: 0...UInt64.max))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return directory
}
