import GroupPolicy
import GroupPolicyBasics

/// The rows and columns of a ``ScenarioMatrix``, each row evaluated under both versions on demand:
/// counted and weighed before anything is evaluated, and evaluated without building any cell but
/// those listed.
///
/// A row is an index into the space's order (group id, then type, then no entry and each single
/// entry); a column an index into the capabilities of both versions, sorted by their bytes as the
/// runtime's catalogs are, so that when both versions declare the same capabilities a column is
/// a bit of both bit sets.
struct MatrixEvaluation {
    /// A capability of either version, and its bit in each (`nil` where it is not declared).
    struct Column {
        var name: String
        var current: Int?
        var saved: Int?
    }

    let columns: [Column]
    let rowCount: Int
    private let groupIDs: [String]
    private let groupTypes: [String]
    private let candidates: [ScenarioSpace.Candidate]
    /// Rows per group id: each type's row without an entry, and one per entry except in `CONSUMER`.
    private let rowsPerGroupID: Int
    private let context: EvaluationContext
    private var current: ScenarioEvaluator
    private var saved: ScenarioEvaluator
    /// Each version's bits laid out as columns, when the versions' catalogs differ.
    private let currentLayout: ColumnLayout
    private let savedLayout: ColumnLayout
    /// Whether a bit of one version is the same column as that bit of the other, so that bit sets
    /// are compared word by word as they are.
    private let sameCatalog: Bool
    /// A row's bits of each version as columns, reused from row to row.
    private var currentWords: [UInt64]
    private var savedWords: [UInt64]

    /// Lays out the matrix of two versions in one environment.
    ///
    /// - Throws: `overBudget` when the space has more than ``ScenarioMatrix/maximumRows`` rows;
    ///   `limitExceeded` when its rows would cost more rule checks than ``ScenarioWork/limit``.
    init(policy: Policy, saved savedPolicy: Policy, context: EvaluationContext) throws(GroupPolicyError) {
        let maximumRows = ScenarioMatrix.maximumRows
        let space = ScenarioSpace(documents: policy.documents + savedPolicy.documents, maximumCandidates: maximumRows)
        let candidates = space.candidates(in: context.environment)
        // Without the sandbox placeholder that the space adds in Sandbox: the runtime sets it
        // apart only in Production, so in Sandbox its rows would repeat the unnamed group's.
        let groupIDs = space.groupIDs
        let perGroupID = space.groupTypes.reduce(0) {
            saturatingSum($0, $1 == GroupType.consumer.rawValue ? 1 : 1 + candidates.count)
        }
        let rows = saturatingProduct(perGroupID, groupIDs.count)
        guard !space.isOverLimit, rows <= maximumRows else {
            let count = space.isOverLimit ? "more than \(maximumRows)" : "\(rows)"
            throw GroupPolicyError(
                code: .overBudget,
                message: "the scenario matrix has \(count) rows, over the limit of \(maximumRows)"
            )
        }

        var names = Set(policy.capabilities.map(\.name).map(ExactName.init))
        names.formUnion(savedPolicy.capabilities.map(\.name).map(ExactName.init))
        let sorted = names.map(\.string).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        columns = sorted.map {
            Column(name: $0, current: policy.capabilityIndex(of: $0), saved: savedPolicy.capabilityIndex(of: $0))
        }
        var currentColumns = [Int](repeating: 0, count: policy.capabilities.count)
        var savedColumns = [Int](repeating: 0, count: savedPolicy.capabilities.count)
        for (index, column) in columns.enumerated() {
            if let bit = column.current { currentColumns[bit] = index }
            if let bit = column.saved { savedColumns[bit] = index }
        }
        currentLayout = ColumnLayout(columnOfBit: currentColumns)
        savedLayout = ColumnLayout(columnOfBit: savedColumns)
        sameCatalog = currentColumns == Array(columns.indices) && savedColumns == currentColumns

        // Each row is evaluated under both versions and compared column by column (or word by
        // word): weighed as `diff` weighs its scenarios, before anything is evaluated.
        let currentWork = ScenarioWork(documents: policy.documents, capabilityCount: policy.capabilities.count)
        let savedWork = ScenarioWork(
            documents: savedPolicy.documents,
            capabilityCount: savedPolicy.capabilities.count
        )
        let perID = saturatingSum(
            saturatingSum(currentWork.cost(groupIDs: groupIDs), savedWork.cost(groupIDs: groupIDs)),
            saturatingProduct(columns.count, groupIDs.count)
        )
        let work = saturatingProduct(perGroupID, perID)
        let limit = ScenarioWork.limit
        guard work <= limit else {
            throw GroupPolicyError(
                code: .limitExceeded,
                message: "the scenario matrix's \(rows) rows would cost about \(work) rule checks, over the work "
                    + "limit of \(limit)"
            )
        }

        rowCount = rows
        rowsPerGroupID = perGroupID
        self.groupIDs = groupIDs
        groupTypes = space.groupTypes
        self.candidates = candidates
        self.context = context
        current = ScenarioEvaluator(policy: policy)
        saved = ScenarioEvaluator(policy: savedPolicy)
        currentWords = [UInt64](repeating: 0, count: (columns.count + 63) / 64)
        savedWords = currentWords
    }

    /// The scenario of a row: its group id and type, and its entry (an index into the candidates).
    private func scenario(ofRow row: Int) -> (groupID: String, groupType: String, entry: Int?) {
        let groupID = groupIDs[row / rowsPerGroupID]
        var offset = row % rowsPerGroupID
        for groupType in groupTypes {
            let count = groupType == GroupType.consumer.rawValue ? 1 : 1 + candidates.count
            if offset < count { return (groupID, groupType, offset == 0 ? nil : offset - 1) }
            offset -= count
        }
        return (groupID, groupTypes[groupTypes.count - 1], nil)
    }

    /// Evaluates a row under both versions.
    private mutating func evaluate(_ row: Int) -> (groupID: String, groupType: String, entry: Int?) {
        let scenario = scenario(ofRow: row)
        let type = GroupType(rawValue: scenario.groupType)
        let entries = scenario.entry.map { [$0] } ?? []
        current.evaluate(groupID: scenario.groupID, groupType: type, entries: entries, of: candidates, context: context)
        saved.evaluate(groupID: scenario.groupID, groupType: type, entries: entries, of: candidates, context: context)
        return scenario
    }

    /// The columns whose cell in `row` differs between the versions, ascending.
    ///
    /// Bit sets are compared a word at a time: as they are when both versions declare the same
    /// capabilities, else each laid out as columns first (a copy of each run of bits that keeps
    /// its place relative to the columns), so a row costs its words and the catalogs' differences,
    /// not its capabilities.
    mutating func changedColumns(ofRow row: Int) -> [Int] {
        _ = evaluate(row)
        var changed: [Int] = []
        if sameCatalog {
            CapabilityBits.forEachDifference(current.capabilities, saved.capabilities) { bit, _ in changed.append(bit) }
            return changed
        }
        currentLayout.lay(current.capabilities, into: &currentWords)
        savedLayout.lay(saved.capabilities, into: &savedWords)
        for position in currentWords.indices {
            var remaining = currentWords[position] ^ savedWords[position]
            while remaining != 0 {
                changed.append(position * 64 + remaining.trailingZeroBitCount)
                remaining &= remaining - 1
            }
        }
        return changed
    }

    /// A row's cells in `columns` (in that order), and at most how many bytes it adds to the
    /// matrix's compact JSON.
    mutating func row(_ row: Int, columns shown: [Int]) -> (row: ScenarioMatrix.Row, bytes: Int) {
        let scenario = evaluate(row)
        let entry = scenario.entry.map { candidates[$0].entry }
        var listed = ScenarioMatrix.Row(
            groupID: scenario.groupID,
            groupType: scenario.groupType,
            entry: entry,
            capabilities: [],
            changed: []
        )
        // The keys, brackets, commas and nulls of a row take fewer than 100 bytes.
        var bytes = 100 + Self.quotedCount(scenario.groupID) + Self.quotedCount(scenario.groupType)
        if let entry {
            bytes += Self.quotedCount(entry.productID) + Self.quotedCount(entry.role.rawValue)
        }
        for column in shown {
            let granted = columns[column].current.map(current.has) ?? false
            let before = columns[column].saved.map(saved.has) ?? false
            let name = columns[column].name
            if granted {
                listed.capabilities.append(name)
                bytes += Self.quotedCount(name) + 1
            }
            if granted != before {
                listed.changed.append(name)
                bytes += Self.quotedCount(name) + 1
            }
        }
        return (listed, bytes)
    }

    /// At most how many bytes the compact JSON takes besides its rows: the environment, the
    /// entitlements, the columns and the counts.
    func headerBytes(columns shown: [Int], entitlements: [String]) -> Int {
        let names = shown.reduce(0) { $0 + Self.quotedCount(columns[$1].name) + 1 }
        return 400 + names + entitlements.reduce(0) { $0 + Self.quotedCount($1) + 1 }
    }

    /// A string's length as a JSON string literal.
    private static func quotedCount(_ text: String) -> Int {
        JSONWriter.escapedCount(text) + 2
    }
}

/// How one version's capability bits sit among the matrix's columns: runs of consecutive bits
/// whose columns are consecutive too, each at its offset.
struct ColumnLayout {
    /// A run: `count` bits from `firstBit`, in the columns from `firstBit + shift`.
    private struct Run {
        var firstBit: Int
        var count: Int
        var shift: Int
    }

    private var runs: [Run] = []

    /// The layout of a version whose bit `b` is column `columnOfBit[b]` (ascending).
    init(columnOfBit: [Int]) {
        for (bit, column) in columnOfBit.enumerated() {
            if let last = runs.last, last.firstBit + last.count == bit, last.shift == column - bit {
                runs[runs.count - 1].count += 1
            } else {
                runs.append(Run(firstBit: bit, count: 1, shift: column - bit))
            }
        }
    }

    /// Writes `bits` as columns into `words` (as many words as the columns need), replacing what
    /// they held.
    func lay(_ bits: CapabilityBits, into words: inout [UInt64]) {
        for index in words.indices { words[index] = 0 }
        func copy(_ source: UnsafeBufferPointer<UInt64>) {
            for run in runs {
                var bit = run.firstBit
                let end = run.firstBit + run.count
                while bit < end {
                    let offset = bit & 63
                    let count = min(64 - offset, end - bit)
                    let sourceWord = bit >> 6 < source.count ? source[bit >> 6] : 0
                    let chunk = (sourceWord >> UInt64(offset)) & (count == 64 ? ~0 : (1 << UInt64(count)) - 1)
                    let column = bit + run.shift
                    let target = column >> 6
                    let shift = column & 63
                    words[target] |= chunk << UInt64(shift)
                    if shift + count > 64 { words[target + 1] |= chunk >> UInt64(64 - shift) }
                    bit += count
                }
            }
        }
        switch bits {
        case .small(let word):
            withUnsafePointer(to: word) { copy(UnsafeBufferPointer(start: $0, count: 1)) }
        case .large(let source):
            source.withUnsafeBufferPointer(copy)
        }
    }
}
