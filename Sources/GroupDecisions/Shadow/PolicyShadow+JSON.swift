/// Which counts a serialized report was made of: the tally's epoch and version, and the layout.
struct ReportMark: Equatable {
    var epoch: Int
    var version: Int
    var pretty: Bool
}

/// The last report serialized, and which counts it was made of.
struct SerializedReport {
    /// `nil` before the first.
    var mark: ReportMark?
    var bytes: [UInt8] = []
    /// How many times a report was serialized (for tests: readers of an unchanged report share one).
    var serializations = 0
}

extension PolicyShadow {
    /// The report's JSON (``ShadowReport/jsonBytes(pretty:)``), serialized once per change of the
    /// counts: readers of an unchanged report get the same bytes, and one reader at a time
    /// serializes, so readers never hold more than one report's bytes between them.
    func reportJSON(pretty: Bool) -> [UInt8] {
        serialized.withLock { (cache: inout SerializedReport) -> [UInt8] in
            // The counts and rows of one instant, copied under the lock (only when they changed);
            // sorted and written outside it.
            let (mark, copied) = state.withLock { (state: inout State) -> (ReportMark, ShadowReport?) in
                let mark = ReportMark(epoch: state.epoch, version: state.tally.version, pretty: pretty)
                return (mark, cache.mark == mark ? nil : state.tally.report)
            }
            guard var report = copied else { return cache.bytes }
            report.changes.sort(by: ShadowReport.Change.precedes)
            cache.bytes = report.jsonBytes(pretty: pretty)
            cache.mark = mark
            cache.serializations += 1
            return cache.bytes
        }
    }
}
