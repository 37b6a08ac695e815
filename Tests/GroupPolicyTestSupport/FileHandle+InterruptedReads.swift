import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads of a child process's pipe that survive a signal.
///
/// Foundation's `availableData` and `readDataToEndOfFile()` trap on Linux when `read` fails with
/// `EINTR`, which a loaded machine delivers now and then (a child exiting while the test process
/// reads): the whole test process then dies with one test's read. These read with `read(2)` and
/// try again after an interrupted call.
extension FileHandle {
    /// The bytes one successful `read` returns (empty at the end of the file), waiting for some.
    package func readAvailableBytes() throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(fileDescriptor, $0.baseAddress, $0.count) }
            if count >= 0 { return Array(buffer[..<count]) }
            if errno != EINTR { throw InterruptedReadError(errorNumber: errno) }
        }
    }

    /// Every byte up to the end of the file.
    package func readBytesToEnd() throws -> [UInt8] {
        var bytes: [UInt8] = []
        while true {
            let chunk = try readAvailableBytes()
            if chunk.isEmpty { return bytes }
            bytes += chunk
        }
    }
}

/// A read of a pipe failed for a reason other than a signal.
package struct InterruptedReadError: Error, CustomStringConvertible {
    package let errorNumber: Int32
    package var description: String { "read failed: \(String(cString: strerror(errorNumber)))" }
}

#if canImport(Glibc)
private let systemRead = Glibc.read
#elseif canImport(Musl)
private let systemRead = Musl.read
#elseif canImport(Darwin)
private let systemRead = Darwin.read
#endif
