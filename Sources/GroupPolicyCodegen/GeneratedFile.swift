import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SwiftConstantsGenerator.Output {
    /// Writes the source to `path`, leaving the file untouched when it already holds exactly this
    /// source (so a build that regenerates it has nothing new to compile).
    ///
    /// - Parameter path: The file to write; its directory must exist.
    /// - Throws: The file system's error when the file cannot be written.
    public func write(to path: String) throws {
        let bytes = Data(source.utf8)
        // Read no more of the old file than the new source's size: a longer file (or a special
        // one named by mistake) differs anyway.
        if let old = try? BoundedFileReader.read(path, maximumBytes: bytes.count), old.elementsEqual(bytes) { return }
        try bytes.write(to: URL(filePath: path), options: .atomic)
    }
}
