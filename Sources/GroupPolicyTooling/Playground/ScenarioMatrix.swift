public import GroupPolicy
import GroupPolicyBasics

/// Every single-group scenario of the scenario space against every capability: which the policy
/// grants, and which of those answers changed against the saved version of the policy; bounded in
/// rows, work, cells and bytes.
///
/// A row is one group of each type the space enumerates (see the DocC article "The scenario
/// space"), with no role entry or with one role entry per product and role, in one environment
/// with one set of verified entitlements; in `CONSUMER` groups only the row without an entry, as
/// Apple sends none. Both versions are evaluated by the runtime's compiled tables, as invariants
/// and diffs are, over one space built from both, so a value either version names has its rows.
///
/// Every row is evaluated, and every changed cell counted; but only a *window* of the cells is
/// listed. When the whole matrix fits (at most ``maximumCells`` cells and ``maximumBytes`` bytes of
/// JSON), the window is all of it, in the space's order. Past that, rows with a changed cell come
/// first and columns (capabilities) with a changed cell come first, and the window shows at most
/// ``windowColumns`` columns and as many rows as the cell and byte bounds allow, from
/// ``Window/firstRow`` and ``Window/firstColumn`` of that order: the changes an edit makes are
/// what an author sees first, and the counts say how much is not shown.
public struct ScenarioMatrix: Sendable {
    /// One scenario and what it is granted, within the window's columns.
    public struct Row: Sendable, Hashable {
        /// The group's id: the unnamed id, or one a policy matches literally.
        public var groupID: String
        /// The group's type.
        public var groupType: String
        /// The group's one role entry, if it has one.
        public var entry: RoleEntry?
        /// The window's capabilities the policy grants the scenario, in column order.
        public var capabilities: [String]
        /// The window's capabilities whose answer differs from the saved version's, in column
        /// order: granted by one version and not the other (a capability only one version
        /// declares counts as not granted by the other).
        public var changed: [String]
    }

    /// Where the listed part of the matrix starts, in the matrix's order (``isOrderedByChange``).
    public struct Window: Sendable, Hashable {
        /// The first row listed.
        public var firstRow: Int
        /// The first column listed.
        public var firstColumn: Int

        /// A window from a row and a column; negative values count as 0.
        public init(firstRow: Int = 0, firstColumn: Int = 0) {
            self.firstRow = max(0, firstRow)
            self.firstColumn = max(0, firstColumn)
        }
    }

    /// The most rows (scenarios) a matrix evaluates: 10,000; a larger space is refused at once,
    /// before anything is evaluated.
    public static let maximumRows = 10_000

    /// The most cells (rows × columns) a matrix lists: 100,000, a table a browser draws at once.
    public static let maximumCells = 100_000

    /// The most columns a window lists when the whole matrix does not fit: 100.
    public static let windowColumns = 100

    /// The most bytes of the matrix's compact JSON: 4 MiB.
    ///
    /// Rows that would take ``jsonString(pretty:)`` past this are left out of the window.
    public static let maximumBytes = 4 << 20

    /// The environment of every scenario.
    public let environment: StoreEnvironment
    /// The entitlements every scenario holds, sorted.
    public let entitlements: [String]
    /// The window's columns: capabilities either version declares, in the matrix's order.
    public let capabilities: [String]
    /// The window's rows, in the matrix's order (by group id, then type, then the row without an
    /// entry, then each entry by product and role in the space's order; rows with a change first
    /// when ``isOrderedByChange``).
    public let rows: [Row]
    /// The window shown: where ``rows`` and ``capabilities`` start in the matrix's order.
    public let window: Window
    /// How many rows the matrix has (every scenario evaluated).
    public let rowCount: Int
    /// How many columns the matrix has: every capability either version declares.
    public let capabilityCount: Int
    /// How many rows have a changed cell.
    public let changedRowCount: Int
    /// How many columns have a changed cell.
    public let changedCapabilityCount: Int
    /// How many cells changed, in the whole matrix.
    public let changedCellCount: Int
    /// Whether changed rows and columns come first.
    ///
    /// They do when the whole matrix is over ``maximumCells`` cells or ``maximumBytes`` bytes;
    /// otherwise rows come in the space's order and columns sorted.
    public let isOrderedByChange: Bool

    /// Whether the window lists the whole matrix.
    public var isComplete: Bool { rows.count == rowCount && capabilities.count == capabilityCount }

    /// Evaluates every scenario under `policy`, and under `savedPolicy` to mark what changed, and
    /// lists the cells of `window`.
    ///
    /// - Parameters:
    ///   - policy: The policy as edited.
    ///   - savedPolicy: The policy as saved; `nil` marks nothing.
    ///   - context: The environment and verified entitlements of every scenario.
    ///   - window: Where the listed cells start, when the whole matrix does not fit (a matrix that
    ///     fits is listed whole, from its first row and column).
    /// - Throws: A `GroupPolicyError` with code `overBudget` when the space has more than
    ///   ``maximumRows`` rows, or `limitExceeded` when evaluating its rows under both versions
    ///   would cost more rule checks than the work limit `check` and `diff` have (see the DocC
    ///   article "Limits and failure semantics"); both before anything is evaluated.
    public init(
        policy: Policy,
        savedPolicy: Policy? = nil,
        context: EvaluationContext,
        window: Window = Window()
    ) throws(GroupPolicyError) {
        environment = context.environment
        entitlements = context.entitlements.sorted()
        let saved = savedPolicy ?? policy
        var evaluation = try MatrixEvaluation(policy: policy, saved: saved, context: context)
        let columnCount = evaluation.columns.count

        // First pass: every row, to find what changed.
        var changedRows: [Int] = []
        var changedColumns = [Bool](repeating: false, count: columnCount)
        var changedCells = 0
        for row in 0..<evaluation.rowCount {
            let changes = evaluation.changedColumns(ofRow: row)
            guard !changes.isEmpty else { continue }
            changedRows.append(row)
            changedCells += changes.count
            for column in changes { changedColumns[column] = true }
        }
        rowCount = evaluation.rowCount
        capabilityCount = columnCount
        changedRowCount = changedRows.count
        changedCapabilityCount = changedColumns.count { $0 }
        changedCellCount = changedCells

        // The whole matrix, in the space's order, when it fits in cells and bytes.
        let allColumns = Array(0..<columnCount)
        if saturatingProduct(rowCount, columnCount) <= Self.maximumCells {
            var bytes = evaluation.headerBytes(columns: allColumns, entitlements: entitlements)
            var rows: [Row] = []
            for row in 0..<rowCount {
                let listed = evaluation.row(row, columns: allColumns)
                bytes += listed.bytes
                guard bytes <= Self.maximumBytes else { break }
                rows.append(listed.row)
            }
            if rows.count == rowCount {
                self.rows = rows
                capabilities = evaluation.columns.map(\.name)
                self.window = Window()
                isOrderedByChange = false
                return
            }
        }

        // Else changed rows and columns first, and the window's rows within the cell and byte bounds.
        isOrderedByChange = true
        let columnOrder = allColumns.filter { changedColumns[$0] } + allColumns.filter { !changedColumns[$0] }
        let isChanged = Set(changedRows)
        let rowOrder = changedRows + (0..<rowCount).filter { !isChanged.contains($0) }
        let firstColumn = min(window.firstColumn, columnCount)
        let firstRow = min(window.firstRow, rowCount)
        self.window = Window(firstRow: firstRow, firstColumn: firstColumn)
        let shownColumns = Array(columnOrder[firstColumn..<min(columnCount, firstColumn + Self.windowColumns)])
        capabilities = shownColumns.map { evaluation.columns[$0].name }
        let rowLimit = Self.maximumCells / max(1, shownColumns.count)
        var bytes = evaluation.headerBytes(columns: shownColumns, entitlements: entitlements)
        var rows: [Row] = []
        for row in rowOrder[firstRow..<min(rowCount, firstRow + rowLimit)] {
            let listed = evaluation.row(row, columns: shownColumns)
            bytes += listed.bytes
            guard bytes <= Self.maximumBytes else { break }
            rows.append(listed.row)
        }
        self.rows = rows
    }
}

extension ScenarioMatrix {
    /// The matrix as JSON.
    ///
    /// Its keys: `environment`, `entitlements`, `capabilities` (the window's columns) and
    /// `rows` (the window's rows), each with `groupId`, `groupType`, `productId` and `role` (`null`
    /// without an entry), `capabilities` and `changed`; then `rowCount`, `capabilityCount`,
    /// `changedRows`, `changedCapabilities`, `changedCells`, `orderedByChange`, `firstRow`,
    /// `firstColumn` and `complete`. Compact, it holds at most ``maximumBytes`` bytes.
    ///
    /// - Parameter pretty: Pretty with two-space indentation, or compact.
    /// - Returns: The JSON text, without a trailing newline.
    public func jsonString(pretty: Bool = false) -> String {
        var writer = JSONWriter(pretty: pretty, reservingCapacity: 128 * rows.count + 256)
        writer.beginObject()
        writer.member("environment", environment.rawValue)
        writer.member("entitlements", strings: entitlements)
        writer.member("capabilities", strings: capabilities)
        writer.member("rows", objects: rows) { writer, row in
            writer.member("groupId", row.groupID)
            writer.member("groupType", row.groupType)
            writer.member("productId", orNull: row.entry?.productID)
            writer.member("role", orNull: row.entry?.role.rawValue)
            writer.member("capabilities", strings: row.capabilities)
            writer.member("changed", strings: row.changed)
        }
        writer.member("rowCount", number: rowCount)
        writer.member("capabilityCount", number: capabilityCount)
        writer.member("changedRows", number: changedRowCount)
        writer.member("changedCapabilities", number: changedCapabilityCount)
        writer.member("changedCells", number: changedCellCount)
        writer.key("orderedByChange")
        writer.bool(isOrderedByChange)
        writer.member("firstRow", number: min(window.firstRow, rowCount))
        writer.member("firstColumn", number: min(window.firstColumn, capabilityCount))
        writer.key("complete")
        writer.bool(isComplete)
        writer.endObject()
        return writer.string
    }
}
