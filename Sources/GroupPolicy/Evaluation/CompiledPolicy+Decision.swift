import GroupPolicyBasics

extension CompiledPolicy {
    /// The full decision: per group, the matching rules are found through the indexes (group-level
    /// rules, rules of the entries' products, any-product rules, direct rules), checked against
    /// their definitions, and recorded as compact indices with the role entries they matched
    /// through.
    ///
    /// The working memory (merge plan, bit sets, interned entries) is temporary; the decision keeps
    /// only its record arrays.
    func decide(_ response: GetCustomerGroupsResponse, context: EvaluationContext) -> Decision {
        let words = catalog.wordCount
        let groups = response.groups
        let count = groups.count
        var roleCount = 0
        for group in groups { roleCount += group.roles.count }
        var records = DecisionProvenance()
        let customer = groups.withUnsafeBufferPointer { buffer in
            // The merge plan (two values per group), then three values per role entry.
            withScratchBuffer(of: Int32.self, capacity: 2 * count + 3 * roleCount + 1) { scratch in
                withScratchBuffer(of: UInt64.self, capacity: 4 * words) { bits in
                    bits.initialize(repeating: 0)
                    let merge = GroupMerge(
                        buffer,
                        first: UnsafeMutableBufferPointer(rebasing: scratch[0..<count]),
                        next: UnsafeMutableBufferPointer(rebasing: scratch[count..<2 * count])
                    )
                    decideGroups(
                        groups,
                        merge: merge,
                        context: context,
                        bits: bits,
                        entryScratch: UnsafeMutableBufferPointer(rebasing: scratch[(2 * count)...]),
                        roleCount: roleCount,
                        records: &records
                    )
                    return CapabilityBits(words: UnsafeBufferPointer(rebasing: bits[0..<words]))
                }
            }
        }
        return Decision(
            capabilities: CapabilitySet(catalog: catalog, bits: customer),
            policy: self,
            responseGroups: groups,
            sandbox: context.environment == .sandbox,
            records: records
        )
    }

    /// Evaluates each merged group in order of first occurrence and records it.
    ///
    /// `bits` holds the customer's words, then the group's granted, denied and surviving words;
    /// `entryScratch` three values per role entry of the response.
    private func decideGroups(
        _ groups: [GroupEntry],
        merge: GroupMerge,
        context: EvaluationContext,
        bits: UnsafeMutableBufferPointer<UInt64>,
        entryScratch: UnsafeMutableBufferPointer<Int32>,
        roleCount: Int,
        records: inout DecisionProvenance
    ) {
        let words = catalog.wordCount
        guard let customer = bits.baseAddress else { return }
        let granted = customer + words
        let denied = granted + words
        let surviving = denied + words
        records.groups.reserveCapacity(groups.count)
        records.grants.reserveCapacity(8 + 4 * roleCount)
        // Whether the last document's tables (whose interned values evaluateGroup leaves for
        // finishGrants) give each name the tables know its own number: not so in the sandbox when
        // an alias maps two product ids to one.
        let namesInternedExactly = context.environment != .sandbox || (documents.last?.productAliases.isEmpty ?? true)

        for index in groups.indices where merge.isFirst(index) {
            let ordinal = Int32(records.groups.count)
            let group = groups[index]
            var flags: UInt32 = 0
            var member = Int(merge.next[index])
            while member >= 0 {
                if !groups[member].groupType.rawValue.isExactly(group.groupType.rawValue) {
                    flags |= DecisionProvenance.Group.conflictingTypes
                }
                member = Int(merge.next[member])
            }
            for word in 0..<words { surviving[word] = 0 }

            if GroupMerge.ignores(group.groupID, in: context.environment) {
                flags |= DecisionProvenance.Group.placeholder
            } else {
                let entries = merge.next[index] < 0 ? group.roles : merge.entries(ofFirst: index)
                countWork(1 + entries.count)
                for word in 0..<words {
                    granted[word] = 0
                    denied[word] = 0
                }
                let grantStart = records.grants.count
                let denialStart = records.denials.count
                evaluateGroup(
                    groupID: group.groupID,
                    groupType: group.groupType,
                    entries: entries,
                    ordinal: ordinal,
                    context: context,
                    granted: granted,
                    denied: denied,
                    entryScratch: entryScratch,
                    records: &records
                )
                for word in 0..<words {
                    surviving[word] = granted[word] & ~denied[word]
                    customer[word] |= surviving[word]
                }
                finishGrants(
                    from: grantStart,
                    entries: entries,
                    namesInternedExactly: namesInternedExactly,
                    surviving: surviving,
                    merge: merge,
                    first: index,
                    entryScratch: entryScratch,
                    records: &records
                )
                finishDenials(from: denialStart, granted: granted, records: &records)
            }
            var bitsField = surviving[0]
            if words > 1 {
                bitsField = UInt64(records.words.count)
                records.words.append(contentsOf: UnsafeBufferPointer(start: surviving, count: words))
            }
            records.groups.append(DecisionProvenance.Group(first: Int32(index), flags: flags, bits: bitsField))
        }
    }

    /// Finds the rules that match one (merged) group: sets its granted and denied bits and appends a
    /// grant record per (capability, rule, entry) and a denial record per (capability, deny rule),
    /// unsorted and unfiltered (``finishGrants`` and ``finishDenials`` do that).
    ///
    /// A grant record's `entryRole` is here the index in the merged `entries`.
    private func evaluateGroup(
        groupID: String,
        groupType: GroupType,
        entries: [RoleEntry],
        ordinal: Int32,
        context: EvaluationContext,
        granted: UnsafeMutablePointer<UInt64>,
        denied: UnsafeMutablePointer<UInt64>,
        entryScratch: UnsafeMutableBufferPointer<Int32>,
        records: inout DecisionProvenance
    ) {
        let sandbox = context.environment == .sandbox
        guard let entryProducts = entryScratch.baseAddress else { return }
        let entryRoles = entryProducts + entries.count

        for (documentIndex, document) in documents.enumerated() {

            // Each entry's product and role as the tables intern them (the sandbox table maps an
            // alias source to its target's product), and the group's type class.
            let products = sandbox ? document.sandboxProducts.reader : document.productionProducts.reader
            let roles = document.roleClasses.reader
            let typeClass = document.typeClasses.value(for: groupType.rawValue) ?? 0
            for (index, entry) in entries.enumerated() {
                entryProducts[index] = products.value(for: entry.productID) ?? -1
                entryRoles[index] = roles.value(for: entry.role.rawValue) ?? 0
            }

            let layerMask = document.activeLayers(in: context)
            let pool = document.conditionPool
            let conditions = document.ruleConditions
            /// Whether a rule's requirements and group-level conditions hold for this group.
            func holdsForGroup(_ ruleIndex: Int) -> Bool {
                let layer = document.ruleLayers[ruleIndex]
                let requirementsHold =
                    layer >= 0
                    ? layerMask & (1 << UInt64(layer)) != 0 : document.requirementsHold(ofRule: ruleIndex, in: context)
                return requirementsHold && conditions[ruleIndex].types.accepts(typeClass, in: pool)
                    && (!conditions[ruleIndex].hasGroupIDs
                        || document.groupIDsMatch(ofRule: ruleIndex, groupID))
            }
            /// Records a matched rule (through `entry`, -1 for a group-level rule): its capabilities,
            /// and a record per capability.
            func record(_ ruleIndex: Int, entry: Int32) {
                let grants = document.effect(ofRule: ruleIndex) == .grant
                document.ruleBits[ruleIndex].forEachIndex { capability in
                    let bit: UInt64 = 1 << UInt64(capability & 63)
                    if grants {
                        granted[capability >> 6] |= bit
                        records.grants.append(
                            DecisionProvenance.Grant(
                                capability: Int32(capability),
                                document: Int32(documentIndex),
                                rule: Int32(ruleIndex),
                                group: ordinal,
                                entryGroup: -1,
                                entryRole: entry
                            )
                        )
                    } else {
                        denied[capability >> 6] |= bit
                        records.denials.append(
                            DecisionProvenance.Denial(
                                capability: Int32(capability),
                                document: Int32(documentIndex),
                                rule: Int32(ruleIndex),
                                group: ordinal
                            )
                        )
                    }
                }
            }

            // Group-level rules (without groupId conditions).
            for ruleIndex in document.groupLevelRules where holdsForGroup(ruleIndex) {
                record(ruleIndex, entry: -1)
            }
            // Rules with groupId conditions are in no product index: those naming this group (or
            // `"*"`) are checked against every entry (the rules past the 64th requirement layer
            // are in the product indexes too).
            func recordGroupIDRule(_ ruleIndex: Int) {
                guard conditions[ruleIndex].hasGroupIDs && holdsForGroup(ruleIndex) else { return }
                guard conditions[ruleIndex].isRoleLevel else {
                    record(ruleIndex, entry: -1)
                    return
                }
                for index in entries.indices
                where conditions[ruleIndex].products.accepts(entryProducts[index], in: pool)
                    && conditions[ruleIndex].roles.accepts(entryRoles[index], in: pool)
                {
                    record(ruleIndex, entry: Int32(index))
                }
            }
            if !document.directRulesByGroupID.isEmpty, let named = document.directRulesByGroupID[groupID] {
                for ruleIndex in named { recordGroupIDRule(ruleIndex) }
            }
            for ruleIndex in document.directRulesForEveryGroup { recordGroupIDRule(ruleIndex) }
            // Role-level rules through each entry's product (its rules accept that product) and the
            // any-product rules: work grows with the matches, not with rules x entries. A rule
            // naming one product twice records the same entry twice; the finishing step keeps one.
            for index in entries.indices {
                let role = entryRoles[index]
                let product = entryProducts[index]
                if product >= 0 {
                    for ruleIndex in document.rulesByProduct[Int(product)]
                    where conditions[ruleIndex].roles.accepts(role, in: pool) && holdsForGroup(ruleIndex) {
                        record(ruleIndex, entry: Int32(index))
                    }
                }
                for ruleIndex in document.anyProductRules
                where conditions[ruleIndex].roles.accepts(role, in: pool) && holdsForGroup(ruleIndex) {
                    record(ruleIndex, entry: Int32(index))
                }
            }

            // Workspace memberships (the product ids the definitions see: aliased in the sandbox,
            // the entries' own otherwise).
            if !document.workspaces.isEmpty {
                let ruleProductIDs =
                    sandbox && !document.productAliases.isEmpty
                    ? entries.map { document.ruleProductID($0.productID, environment: .sandbox) }
                    : entries.map(\.productID)
                for (workspaceIndex, workspace) in document.workspaceMatchers.enumerated()
                where workspace.requires.hold(in: context) {
                    if let role = workspace.membershipRole(
                        groupID: groupID,
                        groupType: groupType,
                        entries: entries,
                        ruleProductIDs: ruleProductIDs
                    ) {
                        records.memberships.append(
                            DecisionProvenance.Membership(
                                document: Int32(documentIndex),
                                workspace: Int32(workspaceIndex),
                                group: ordinal,
                                isAdmin: role == .admin
                            )
                        )
                    }
                }
            }
        }
    }

    /// Orders one group's grant records by capability (sorted = catalog order), document, rule,
    /// then entry; keeps those whose capability survived, once per distinct entry
    /// (``IdenticalEntries``: identical entries, as in a merged duplicate group, yield one grant);
    /// then turns merged entry indices into the response's (group, role entry) indices.
    ///
    /// Linear in the records after the sort: `entryScratch` holds, per merged entry, the first
    /// entry identical to it and, for a merged group, the response group and role entry it is.
    private func finishGrants(
        from start: Int,
        entries: [RoleEntry],
        namesInternedExactly: Bool,
        surviving: UnsafeMutablePointer<UInt64>,
        merge: GroupMerge,
        first: Int,
        entryScratch: UnsafeMutableBufferPointer<Int32>,
        records: inout DecisionProvenance
    ) {
        guard records.grants.count > start else { return }
        let count = entries.count
        // What evaluateGroup left: each entry's product and role class as the last document
        // interned them (the same for identical entries), until the table below replaces them.
        let internedProducts = UnsafeBufferPointer(rebasing: entryScratch[0..<count])
        let internedRoles = UnsafeBufferPointer(rebasing: entryScratch[count..<2 * count])
        let firstIdentical = UnsafeMutableBufferPointer(rebasing: entryScratch[0..<count])
        let kept = records.grants.withUnsafeMutableBufferPointer { all -> Int in
            let slice = UnsafeMutableBufferPointer(rebasing: all[start...])
            sortGrants(slice)
            countWork(slice.count)
            // Identical entries match the same rules, so a repeat always follows the first of its
            // kind within its (capability, document, rule) run: it is found among the few entries
            // the run kept so far, or, past a few, through the table of every entry's first
            // identical one (built once per group, so the work stays linear).
            var repeatsKnown = false
            var write = 0
            var runStart = 0
            for read in 0..<slice.count {
                let record = slice[read]
                let capability = Int(record.capability)
                guard surviving[capability >> 6] & (1 << UInt64(capability & 63)) != 0 else { continue }
                let previous = write > 0 ? slice[write - 1] : record
                if write > 0 && previous.capability == record.capability && previous.document == record.document
                    && previous.rule == record.rule
                {
                    if record.entryRole >= 0 {
                        // The same entry again (a rule that reaches it twice), or a repeat of one.
                        if previous.entryRole == record.entryRole { continue }
                        let entry = Int(record.entryRole)
                        if !repeatsKnown && write - runStart <= Self.shortRun {
                            // Identical entries have the same interned product and role class, so
                            // only entries that share both can be identical; a product and a role
                            // the tables name are then the same bytes, other values are compared.
                            countWork(write - runStart)
                            let named =
                                namesInternedExactly && internedProducts[entry] >= 0 && internedRoles[entry] > 0
                            var repeated = false
                            for earlier in runStart..<write {
                                let other = Int(slice[earlier].entryRole)
                                guard internedProducts[other] == internedProducts[entry],
                                    internedRoles[other] == internedRoles[entry],
                                    named || IdenticalEntries.areIdentical(entries, other, entry)
                                else { continue }
                                repeated = true
                                break
                            }
                            if repeated { continue }
                        } else {
                            if !repeatsKnown {
                                IdenticalEntries.find(entries, into: firstIdentical)
                                repeatsKnown = true
                            }
                            if firstIdentical[entry] != record.entryRole { continue }
                        }
                    }
                } else {
                    runStart = write
                }
                slice[write] = record
                write += 1
            }
            // Merged entry indices -> (response group, role entry).
            if merge.next[first] < 0 {
                for position in 0..<write where slice[position].entryRole >= 0 {
                    slice[position].entryGroup = Int32(first)
                }
            } else {
                let entryGroup = UnsafeMutableBufferPointer(rebasing: entryScratch[count..<2 * count])
                let entryRole = UnsafeMutableBufferPointer(rebasing: entryScratch[2 * count..<3 * count])
                var merged = 0
                var member = first
                while member >= 0 {
                    for role in merge.groups[member].roles.indices {
                        entryGroup[merged] = Int32(member)
                        entryRole[merged] = Int32(role)
                        merged += 1
                    }
                    member = Int(merge.next[member])
                }
                countWork(merged)
                for position in 0..<write where slice[position].entryRole >= 0 {
                    let index = Int(slice[position].entryRole)
                    slice[position].entryGroup = entryGroup[index]
                    slice[position].entryRole = entryRole[index]
                }
            }
            return start + write
        }
        records.grants.removeSubrange(kept...)
    }

    /// The most entries a run compares a record with one by one before it asks the table of
    /// identical entries.
    private static let shortRun = 8

    /// Keeps one group's denial records whose capability was granted there (only those were
    /// removed), ordered by capability, document, rule, each once.
    private func finishDenials(
        from start: Int,
        granted: UnsafeMutablePointer<UInt64>,
        records: inout DecisionProvenance
    ) {
        guard records.denials.count > start else { return }
        let kept = records.denials.withUnsafeMutableBufferPointer { all -> Int in
            let slice = UnsafeMutableBufferPointer(rebasing: all[start...])
            Self.sort(slice) { left, right in
                if left.capability != right.capability { return left.capability < right.capability }
                if left.document != right.document { return left.document < right.document }
                return left.rule < right.rule
            }
            var write = 0
            for read in 0..<slice.count {
                let record = slice[read]
                let capability = Int(record.capability)
                guard granted[capability >> 6] & (1 << UInt64(capability & 63)) != 0 else { continue }
                if write > 0 {
                    let previous = slice[write - 1]
                    if previous.capability == record.capability && previous.document == record.document
                        && previous.rule == record.rule
                    {
                        continue
                    }
                }
                slice[write] = record
                write += 1
            }
            return start + write
        }
        records.denials.removeSubrange(kept...)
    }

    /// Orders a group's grant records by capability, document, rule, entry: bucketed by capability
    /// (a counting pass; a group's records spread over its capabilities), then each bucket sorted;
    /// catalogs past 255 capabilities take the standard sort.
    private func sortGrants(_ slice: UnsafeMutableBufferPointer<DecisionProvenance.Grant>) {
        let count = slice.count
        let capabilities = catalog.names.count
        func precedesWithinCapability(_ left: DecisionProvenance.Grant, _ right: DecisionProvenance.Grant) -> Bool {
            if left.document != right.document { return left.document < right.document }
            if left.rule != right.rule { return left.rule < right.rule }
            return left.entryRole < right.entryRole
        }
        guard count > 1 else { return }
        guard capabilities <= 255 else {
            Self.sort(slice) { left, right in
                if left.capability != right.capability { return left.capability < right.capability }
                return precedesWithinCapability(left, right)
            }
            return
        }
        withScratchBuffer(of: DecisionProvenance.Grant.self, capacity: count) { bucketed in
            let largest = withUnsafeTemporaryAllocation(of: Int32.self, capacity: capabilities + 1) { starts in
                // starts[c]: where capability c's bucket begins.
                starts.initialize(repeating: 0)
                var largest: Int32 = 0
                for record in slice {
                    starts[Int(record.capability) + 1] += 1
                    largest = max(largest, starts[Int(record.capability) + 1])
                }
                for capability in 0..<capabilities { starts[capability + 1] += starts[capability] }
                for record in slice {
                    let position = Int(starts[Int(record.capability)])
                    bucketed.initializeElement(at: position, to: record)
                    starts[Int(record.capability)] = Int32(position + 1)
                }
                return Int(largest)
            }
            guard largest <= Self.insertionSortLimit else {
                // A large bucket: copied back, then each bucket sorted on its own.
                _ = slice.update(fromContentsOf: bucketed)
                var bucketStart = 0
                for index in 1...count {
                    guard index == count || slice[index].capability != slice[bucketStart].capability else { continue }
                    Self.sort(
                        UnsafeMutableBufferPointer(rebasing: slice[bucketStart..<index]),
                        by: precedesWithinCapability
                    )
                    bucketStart = index
                }
                return
            }
            // Small buckets (the usual few records per capability): each record inserted into its
            // bucket as it is copied back.
            countWork(count)
            var bucketStart = 0
            for index in 0..<count {
                let record = bucketed[index]
                if record.capability != bucketed[bucketStart].capability { bucketStart = index }
                var position = index
                while position > bucketStart && precedesWithinCapability(record, slice[position - 1]) {
                    slice[position] = slice[position - 1]
                    position -= 1
                }
                slice[position] = record
            }
        }
    }

    /// The most records sorted by insertion (each moved past at most this many): beyond, the
    /// standard sort, so sorting stays O(n log n) however many records share a capability.
    private static let insertionSortLimit = 32

    /// Sorts a group's records: insertion sort for the usual few dozen, the standard sort beyond.
    @inline(__always)
    private static func sort<Record>(
        _ records: UnsafeMutableBufferPointer<Record>,
        by precedes: (Record, Record) -> Bool
    ) {
        countWork(records.count)
        guard records.count > insertionSortLimit else {
            for index in records.indices.dropFirst() {
                let record = records[index]
                var position = index
                while position > 0 && precedes(record, records[position - 1]) {
                    records[position] = records[position - 1]
                    position -= 1
                }
                records[position] = record
            }
            return
        }
        var records = records
        records.sort(by: precedes)
    }
}
