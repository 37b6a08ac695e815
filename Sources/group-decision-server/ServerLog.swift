import GroupDecisions

/// The server's log on standard error (its messages and its access log): never written on a
/// request's path.
///
/// Lines wait in a buffer (`--log-buffer`, 1 MiB by default) that one queue writes out, so a
/// standard error nobody reads (a full pipe, a stopped terminal) costs lines, never an answer or
/// a connection slot. Lines that do not fit are counted and reported in one line: at once for the
/// first loss, then at most once a minute.
enum ServerLog {
    private static let standardError: LineWriter? = try? LineWriter(
        .descriptor(2, owned: false),
        capacityBytes: 1 << 20,
        label: "group-decision-server.standardError"
    ) { loss in
        // Beyond the capacity: this line is what says lines went missing.
        standardError?.write(describe(loss, of: "log", unit: "line"), evenWhenFull: true)
    }

    /// Sets the buffer's size (the `--log-buffer` option).
    static func setBufferBytes(_ bytes: Int) {
        standardError?.capacityBytes = bytes
    }

    /// Queues one line; control characters in it are escaped, so it stays one line.
    static func line(_ text: String) {
        standardError?.write(oneLine(text))
    }

    /// Waits up to two seconds for the lines queued so far to be written (before the process exits).
    static func flush() {
        _ = standardError?.flush(within: .seconds(2))
    }

    /// The line reporting a loss of the decision log.
    static func decisionLogLoss(_ loss: DecisionLog.Loss) {
        line(
            describe(
                LineWriter.Loss(dropped: loss.dropped, failed: loss.failed, lastError: loss.lastError),
                of: "decision log",
                unit: "record"
            )
        )
    }

    /// `<what>: N <unit>s dropped (its reader does not keep up); M not written: <error>`.
    static func describe(_ loss: LineWriter.Loss, of what: String, unit: String) -> String {
        func counted(_ count: Int) -> String { "\(count) \(unit)\(count == 1 ? "" : "s")" }
        var parts: [String] = []
        if loss.dropped > 0 {
            parts.append("\(counted(loss.dropped)) dropped (its reader does not keep up)")
        }
        if loss.failed > 0 {
            let failed = parts.isEmpty ? counted(loss.failed) : "\(loss.failed)"
            parts.append("\(failed) not written: \(loss.lastError ?? "write failed")")
        }
        return "\(what): " + parts.joined(separator: "; ")
    }

    /// The text with every character that could break or disguise a log line escaped as JSON
    /// escapes it: C0 and C1 controls, DEL, the line and paragraph separators, and the
    /// bidirectional and zero-width formatting characters.
    static func oneLine(_ text: String) -> String {
        func hidden(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
            case 0x061C, 0x200B...0x200F, 0x202A...0x202E, 0x2060, 0x2066...0x2069, 0xFEFF: true
            default: false
            }
        }
        guard text.unicodeScalars.contains(where: hidden) else { return text }
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            case _ where hidden(scalar):
                let hex = String(scalar.value, radix: 16)
                escaped += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
