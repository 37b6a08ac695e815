import GroupPolicyBasics

/// A document's rules in compact form: what evaluation, explanation, provenance and the tools read
/// of them, without the parsed document's per-rule arrays, strings and paths.
///
/// Strings (capability names, match values, descriptions) are stored once each, and rules refer
/// to them by index; each rule is a fixed-size record, and its capability
/// list and match conditions are runs of small integers in one pool. A 100,000-rule policy so
/// keeps a few bytes per rule and per value instead of a few hundred. A rule's definition can
/// still be rebuilt exactly (``definition(_:fileName:)``) for the tools that want it.
struct RuleTable: Sendable {
    /// One rule's fixed-size part.
    struct Record: Sendable {
        var offset: Int
        /// 1-based line and column of the rule's start; line 0 when the rule has no location.
        var line: UInt32
        var column: UInt32
        /// The capability list: `pool[capabilities]` values from `pool[capabilities + 1]`.
        var capabilities: UInt32
        /// Four condition headers from `pool[match]` (group type, group id, product id, role),
        /// each followed by its values: 0 absent, 1 `"*"`, `2 + n` a list of `n` string indices.
        var match: UInt32
        var requirement: UInt32
        /// The description's string index plus one; 0 when the rule has none.
        var description: UInt32
        var effect: RuleEffect
    }

    /// Which match condition of a rule.
    enum ConditionKind: Int {
        case groupType = 0
        case groupID = 1
        case productID = 2
        case role = 3
    }

    let strings: StringList
    let records: [Record]
    let pool: [UInt32]
    /// Each distinct `requires` block, as written (entitlements in their order).
    let requirements: [Requirements]
    /// Rules whose path or location is not the usual one (`rules[i]`, in the document's file),
    /// kept whole: only documents built by hand in tests have them.
    let irregular: [Int: RuleDefinition]

    var count: Int { records.count }

    init(rules: [RuleDefinition], fileName: String?) {
        var strings = StringList.Builder()
        var records: [Record] = []
        records.reserveCapacity(rules.count)
        var pool: [UInt32] = []
        var requirements: [Requirements] = [.none]
        var requirementIndex: [RequirementKey: UInt32] = [RequirementKey(.none): 0]
        var irregular: [Int: RuleDefinition] = [:]
        func append(_ condition: ValueCondition?) {
            switch condition {
            case nil: pool.append(0)
            case .any?: pool.append(1)
            case .oneOf(let values)?: pool.append(UInt32(values.count) + 2)
            }
        }
        func appendValues(_ condition: ValueCondition?) {
            if case .oneOf(let values)? = condition {
                for value in values { pool.append(strings.index(of: value)) }
            }
        }
        // Fields are read in place by index: a `for rule in` loop copies every rule.
        for index in rules.indices {
            let capabilities = UInt32(pool.count)
            pool.append(UInt32(rules[index].capabilities.count))
            for name in rules[index].capabilities { pool.append(strings.index(of: name)) }
            let match = UInt32(pool.count)
            // Headers, then values, in ConditionKind order (no array of conditions per rule).
            append(rules[index].match.groupTypes)
            append(rules[index].match.groupIDs)
            append(rules[index].match.productIDs)
            append(rules[index].match.roles)
            appendValues(rules[index].match.groupTypes)
            appendValues(rules[index].match.groupIDs)
            appendValues(rules[index].match.productIDs)
            appendValues(rules[index].match.roles)
            let requirement: UInt32
            if rules[index].requires.environments == nil && rules[index].requires.entitlements.isEmpty {
                requirement = 0
            } else if let existing = requirementIndex[RequirementKey(rules[index].requires)] {
                requirement = existing
            } else {
                requirement = UInt32(requirements.count)
                requirementIndex[RequirementKey(rules[index].requires)] = requirement
                requirements.append(rules[index].requires)
            }
            records.append(
                Record(
                    offset: rules[index].offset,
                    line: UInt32(clamping: rules[index].location?.line ?? 0),
                    column: UInt32(clamping: rules[index].location?.column ?? 0),
                    capabilities: capabilities,
                    match: match,
                    requirement: requirement,
                    description: rules[index].description.map { strings.index(of: $0) + 1 } ?? 0,
                    effect: rules[index].effect
                )
            )
            let path = rules[index].path.components
            let regularPath = path.count == 2 && path[0] == .key("rules") && path[1] == .index(index)
            let regularLocation =
                rules[index].location.map {
                    $0.file == fileName && $0.line > 0 && $0.line <= UInt32.max && $0.column >= 0
                        && $0.column <= UInt32.max
                }
                ?? true
            if !regularPath || !regularLocation { irregular[index] = rules[index] }
        }
        self.strings = strings.finish()
        self.records = records
        self.pool = pool
        self.requirements = requirements
        self.irregular = irregular
    }

    // MARK: Reading

    @inline(__always)
    func effect(_ rule: Int) -> RuleEffect { records[rule].effect }

    @inline(__always)
    func requires(_ rule: Int) -> Requirements { requirements[Int(records[rule].requirement)] }

    /// Whether the rule's `requires` has any condition (block 0 is the empty one).
    @inline(__always)
    func hasRequirements(_ rule: Int) -> Bool { records[rule].requirement != 0 }

    /// One match condition of a rule, read in place.
    @inline(__always)
    func condition(_ kind: ConditionKind, of rule: Int) -> ConditionView {
        let start = Int(records[rule].match)
        var valueStart = start + 4
        for position in 0..<kind.rawValue { valueStart += max(Int(pool[start + position]), 2) - 2 }
        return ConditionView(header: pool[start + kind.rawValue], valueStart: valueStart)
    }

    /// Whether the match names `productId` or `role` (then it holds per role entry).
    func isRoleLevel(_ rule: Int) -> Bool {
        let start = Int(records[rule].match)
        return pool[start + ConditionKind.productID.rawValue] != 0 || pool[start + ConditionKind.role.rawValue] != 0
    }

    /// The rule's capability names, as written.
    func capabilities(_ rule: Int) -> [String] {
        let start = Int(records[rule].capabilities)
        return (0..<Int(pool[start])).map { strings[pool[start + 1 + $0]] }
    }

    /// The rule's `match`, rebuilt.
    func match(_ rule: Int) -> MatchCondition {
        MatchCondition(
            groupTypes: valueCondition(condition(.groupType, of: rule)),
            groupIDs: valueCondition(condition(.groupID, of: rule)),
            productIDs: valueCondition(condition(.productID, of: rule)),
            roles: valueCondition(condition(.role, of: rule))
        )
    }

    /// The rule's definition as parsed, rebuilt; `id` is its id, which the table does not keep.
    func definition(_ rule: Int, id: String, fileName: String?) -> RuleDefinition {
        if let kept = irregular[rule] { return kept }
        let record = records[rule]
        return RuleDefinition(
            id: id,
            description: record.description == 0 ? nil : strings[record.description - 1],
            effect: record.effect,
            capabilities: capabilities(rule),
            match: match(rule),
            requires: requires(rule),
            offset: record.offset,
            path: JSONPath(components: [.key("rules"), .index(rule)]),
            location: record.line == 0
                ? nil : SourcePosition(file: fileName, line: Int(record.line), column: Int(record.column))
        )
    }

    /// A match condition of one rule: absent, `"*"`, or a list of interned values (read through
    /// the table: the view holds no reference, so reading a condition costs no reference counting).
    struct ConditionView {
        let header: UInt32
        let valueStart: Int

        var isPresent: Bool { header != 0 }
        var valueCount: Int { max(Int(header), 2) - 2 }
    }

    /// Whether `condition` holds for `value` (an absent condition holds for every value).
    @inline(__always)
    func matches(_ condition: ConditionView, _ value: String) -> Bool {
        guard condition.header >= 2 else { return true }
        for position in condition.valueStart..<(condition.valueStart + condition.valueCount)
        where strings.isExactly(pool[position], value) {
            return true
        }
        return false
    }

    /// The bytes of the values `condition` lists, together, without building the list.
    func valueBytes(_ condition: ConditionView) -> Int {
        var bytes = 0
        for position in condition.valueStart..<(condition.valueStart + condition.valueCount) {
            bytes += strings[pool[position]].utf8.count
        }
        return bytes
    }

    /// The values `condition` lists, as written (none for absent and `"*"`).
    func values(_ condition: ConditionView) -> [String] {
        var values: [String] = []
        values.reserveCapacity(condition.valueCount)
        for position in condition.valueStart..<(condition.valueStart + condition.valueCount) {
            values.append(strings[pool[position]])
        }
        return values
    }

    /// `condition` as parsed.
    func valueCondition(_ condition: ConditionView) -> ValueCondition? {
        switch condition.header {
        case 0: nil
        case 1: .any
        default: .oneOf(values(condition))
        }
    }

    /// A `requires` block by its bytes, so that two spellings `String` calls equal stay two blocks.
    private struct RequirementKey: Hashable {
        var environments: UInt8
        var entitlements: [[UInt8]]

        init(_ requirements: Requirements) {
            var bits: UInt8 = 0
            if let environments = requirements.environments {
                bits = 1
                if environments.contains(.production) { bits |= 2 }
                if environments.contains(.sandbox) { bits |= 4 }
            }
            environments = bits
            entitlements = requirements.entitlements.map { Array($0.utf8) }
        }
    }
}

/// A rule table's strings, each stored once and read back by index without building a string.
///
/// Explanations list match values for every near miss, and rebuilding strings from bytes cost
/// more than a byte buffer saves; most names are small strings, held inline in the array.
struct StringList: Sendable {
    private let values: [String]

    var count: Int { values.count }

    @inline(__always)
    subscript(index: UInt32) -> String { values[Int(index)] }

    /// Whether string `index` is exactly the bytes of `value`.
    @inline(__always)
    func isExactly(_ index: UInt32, _ value: String) -> Bool { values[Int(index)].isExactly(value) }

    /// Numbers strings while a table is built.
    struct Builder {
        private var index = ExactNameIndex()

        mutating func index(of value: String) -> UInt32 { UInt32(index.number(value)) }

        func finish() -> StringList { StringList(values: index.names) }
    }
}

/// Strings stored once each, as UTF-8 bytes in one buffer, and read back by index.
struct InternedStrings: Sendable {
    private let bytes: [UInt8]
    /// String `k` spans `bytes[ends[k - 1]..<ends[k]]` (from 0 for the first).
    private let ends: [Int]

    var count: Int { ends.count }

    subscript(index: UInt32) -> String {
        let range = self.range(index)
        return bytes.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[range]), as: UTF8.self)
        }
    }

    @inline(__always)
    private func range(_ index: UInt32) -> Range<Int> {
        let start = index == 0 ? 0 : Int(ends[Int(index) - 1])
        return start..<Int(ends[Int(index)])
    }

    /// Whether string `index` is exactly the bytes of `value`.
    @inline(__always)
    func isExactly(_ index: UInt32, _ value: String) -> Bool {
        let range = self.range(index)
        // Lengths first (constant time for native strings): most values differ in length.
        guard range.count == value.utf8.count else { return false }
        var value = value
        return value.withUTF8 { utf8 in
            guard utf8.count == range.count else { return false }
            return bytes.withUnsafeBufferPointer { buffer in
                bytesEqual(UnsafeBufferPointer(rebasing: buffer[range]), utf8)
            }
        }
    }

    /// Interns strings while a table is built.
    struct Builder {
        private var interner = ByteInterner()

        mutating func index(of value: String) -> UInt32 {
            interner.insert(value)
        }

        func finish() -> InternedStrings {
            InternedStrings(bytes: interner.bytes, ends: interner.ends)
        }
    }

    private init(bytes: [UInt8], ends: [Int]) {
        self.bytes = bytes
        self.ends = ends
    }
}
