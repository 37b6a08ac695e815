import ArgumentParsing
import Foundation
import GroupPolicy

/// Exit statuses of the DocC article "Command-line reference": 0 success, 1 the checked thing is
/// wrong, 2 the command could not run.
enum ExitStatus: Int32 {
    case success = 0
    case failure = 1
    case unusable = 2
}

/// Output for people on stdout; diagnostics and errors on stderr.
enum Terminal {
    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func err(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// `Error: message` on one line: control characters in the message are escaped.
    static func error(_ message: String) {
        err("Error: \(message.escapingControlCharacters)")
    }
}

/// Reads a file, or standard input for `-`; failures are "could not run" (exit 2).
///
/// The package's bounded reader with the response limit (1 MiB): an endless stream or a special
/// file stops there.
func readInput(_ path: String) throws(CommandFailure) -> [UInt8] {
    do {
        return try BoundedFileReader.read(pathOrStandardInput: path, maximumBytes: ResponseLimits.default.maximumBytes)
    } catch {
        throw CommandFailure(.unusable, error.message)
    }
}

/// Apple's Get Customer Groups response from a file or standard input (`-`), read within the
/// response limit and decoded strictly; anything else is exit 2 with one line.
func readResponse(_ path: String) throws(CommandFailure) -> GetCustomerGroupsResponse {
    try decodeResponse(readInput(path), fileName: path == "-" ? "<stdin>" : path)
}

/// Apple's Get Customer Groups response from bytes, decoded strictly within the response limits;
/// anything else is exit 2 with one line (the playground answers with the same line).
func decodeResponse(_ bytes: [UInt8], fileName: String) throws(CommandFailure) -> GetCustomerGroupsResponse {
    do {
        return try GetCustomerGroupsResponse(jsonBytes: bytes, fileName: fileName)
    } catch {
        throw CommandFailure(.unusable, "invalid response: \(error)")
    }
}

/// A command that ends with a status and, unless already printed, a one-line message (or, for
/// bad usage found after parsing, the parser's error with the command's usage).
struct CommandFailure: Error {
    var status: ExitStatus
    var message: String?
    var usageError: UsageError?

    init(_ status: ExitStatus, _ message: String? = nil) {
        self.status = status
        self.message = message
    }

    init(_ usageError: UsageError) {
        self.init(.unusable)
        self.usageError = usageError
    }
}

extension ParsedArguments {
    /// Bad usage found after parsing (a value out of range, options that do not go together):
    /// printed like the parser's errors, with the command's usage.
    func usage(_ message: String) -> CommandFailure {
        CommandFailure(usageError(message))
    }

    /// A required option's value; the parser checked that it is there.
    func requiredValue(_ name: String) throws(CommandFailure) -> String {
        do {
            return try required(name)
        } catch {
            throw CommandFailure(error)
        }
    }
}
