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
        if FileManager.default.contents(atPath: path) == bytes { return }
        try bytes.write(to: URL(filePath: path), options: .atomic)
    }
}
