#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat` says about a path (following symbolic links) or an open descriptor: enough to decide
/// whether to read it, and to notice that it changed.
package struct FileStatus: Equatable, Sendable {
    /// The kinds of file the readers tell apart.
    package enum Kind: Sendable {
        case regular
        case directory
        case fifo
        case characterDevice
        case blockDevice
        case socket
        case other

        /// The kind with its article, as messages print it: "a character device".
        package var phrase: String {
            switch self {
            case .regular: "a file"
            case .directory: "a directory"
            case .fifo: "a FIFO"
            case .characterDevice: "a character device"
            case .blockDevice: "a block device"
            case .socket: "a socket"
            case .other: "a special file"
            }
        }
    }

    package var kind: Kind
    /// The size in bytes; only meaningful for regular files (special files often report 0).
    package var size: Int
    package var device: UInt64
    package var inode: UInt64
    /// The modification time in nanoseconds since 1970.
    package var modified: Int64

    /// The status of what `path` names, symbolic links followed.
    package init(path: String) throws(SystemError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemError(number: errno) }
        self.init(info)
    }

    /// The status of an open descriptor.
    package init(descriptor: Int32) throws(SystemError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw SystemError(number: errno) }
        self.init(info)
    }

    private init(_ info: stat) {
        switch Int(info.st_mode) & Int(S_IFMT) {
        case Int(S_IFREG): kind = .regular
        case Int(S_IFDIR): kind = .directory
        case Int(S_IFIFO): kind = .fifo
        case Int(S_IFCHR): kind = .characterDevice
        case Int(S_IFBLK): kind = .blockDevice
        case Int(S_IFSOCK): kind = .socket
        default: kind = .other
        }
        size = Int(info.st_size)
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        modified = Int64(time.tv_sec) &* 1_000_000_000 &+ Int64(time.tv_nsec)
    }
}

/// A failed system call's `errno`, with a short reason for messages.
package struct SystemError: Error, Sendable {
    package var number: Int32

    /// The failure `errno` reports as `number`.
    package init(number: Int32) {
        self.number = number
    }

    /// Whether the path does not exist (`ENOENT`).
    package var isNoSuchFile: Bool { number == ENOENT }

    /// A short lower-case reason, the words the package's messages have always used.
    package var reason: String {
        switch number {
        case ENOENT: return "no such file"
        case EACCES, EPERM: return "permission denied"
        case EISDIR: return "is a directory"
        case ENOTDIR: return "a component of the path is not a directory"
        case ELOOP: return "too many levels of symbolic links"
        case ENAMETOOLONG: return "file name too long"
        default:
            guard let text = strerror(number) else { return "error \(number)" }
            return String(cString: text).lowercased()
        }
    }
}

/// The canonical path of what `path` names (symbolic links, `.` and `..` resolved), or `nil` when
/// it does not resolve.
package func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// The device and inode of the file `path` names, links followed: one file's identity whatever
/// path or hard link reaches it; `nil` when it cannot be looked up.
package func fileIdentity(_ path: String) -> (device: UInt64, inode: UInt64)? {
    guard let status = try? FileStatus(path: path) else { return nil }
    return (status.device, status.inode)
}

/// Whether `path` is a directory (following symbolic links).
package func isDirectory(_ path: String) -> Bool {
    (try? FileStatus(path: path))?.kind == .directory
}
