/// A loaded policy's warnings, stored compactly and rebuilt when read.
///
/// A large policy can have a warning per rule (a role this version does not know, say); as
/// `Diagnostic` values each would keep its own message, path and position strings. Here the texts
/// are interned once each (a repeated message is stored once) and every warning is a fixed-size
/// record.
struct DiagnosticTable: Sendable {
    private struct Record: Sendable {
        var line: Int
        var column: Int
        var kind: UInt32
        /// 0: no location; 1: a location without a file name; `k + 2`: in file (string) `k`.
        var file: UInt32
        var jsonPath: UInt32
        var message: UInt32
        var severity: Diagnostic.Severity
    }

    private let strings: InternedStrings
    private let records: [Record]

    init(_ diagnostics: [Diagnostic]) {
        var strings = InternedStrings.Builder()
        records = diagnostics.map { diagnostic in
            let file: UInt32 =
                switch diagnostic.location {
                case nil: 0
                case let location?: location.file.map { strings.index(of: $0) + 2 } ?? 1
                }
            return Record(
                line: diagnostic.location?.line ?? 0,
                column: diagnostic.location?.column ?? 0,
                kind: strings.index(of: diagnostic.kind.rawValue),
                file: file,
                jsonPath: strings.index(of: diagnostic.jsonPath),
                message: strings.index(of: diagnostic.message),
                severity: diagnostic.severity
            )
        }
        self.strings = strings.finish()
    }

    var count: Int { records.count }

    /// The diagnostics, as given.
    var diagnostics: [Diagnostic] {
        records.map { record in
            let location: SourcePosition? =
                switch record.file {
                case 0: nil
                case 1: SourcePosition(file: nil, line: record.line, column: record.column)
                default: SourcePosition(file: strings[record.file - 2], line: record.line, column: record.column)
                }
            return Diagnostic(
                severity: record.severity,
                kind: Diagnostic.Kind(rawValue: strings[record.kind]),
                location: location,
                jsonPath: strings[record.jsonPath],
                message: strings[record.message]
            )
        }
    }
}
