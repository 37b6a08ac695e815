extension Decision {
    /// The decision as the DocC article "Decision JSON" documents it: keys in the documented order
    /// (`capabilities`, `groups`, `workspaces`, [`grants`, `denials`,] `notes`), then, only when
    /// known, `groupsSource`, `groupsFetchedAt` and `policyRevision`; capability lists sorted,
    /// pretty with two-space indentation or compact.
    ///
    /// - Parameters:
    ///   - includingProvenance: Whether to include `grants` and `denials` (the CLI's `--explain`).
    ///   - pretty: Pretty (the CLI's output) or compact.
    /// - Returns: The JSON text, without a trailing newline.
    public func jsonString(includingProvenance: Bool = false, pretty: Bool = true) -> String {
        String(decoding: jsonBytes(includingProvenance: includingProvenance, pretty: pretty), as: UTF8.self)
    }

    /// The decision's JSON as UTF-8 bytes (see ``jsonString(includingProvenance:pretty:)``).
    ///
    /// Written from the decision's compact records, without building its arrays: the exact size is
    /// measured first, then the bytes are written into one allocation of that size, from the
    /// policy's pre-escaped capability names and the response's strings.
    public func jsonBytes(includingProvenance: Bool = false, pretty: Bool = true) -> [UInt8] {
        measuredJSONBytes(includingProvenance: includingProvenance, pretty: pretty).bytes
    }

    /// The JSON bytes, and whether the measurement was exact (the bytes filled the one allocation of
    /// the measured size; otherwise they were written again into a growing array).
    func measuredJSONBytes(includingProvenance: Bool, pretty: Bool) -> (bytes: [UInt8], exact: Bool) {
        let fragments = policy.jsonFragments
        var entryCount = 0
        for group in responseGroups { entryCount += group.roles.count }
        let groupCount = responseGroups.count
        return fragments.capabilityBytes.withUnsafeBytes { capabilityBytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: groupCount + entryCount) { flags in
                withUnsafeTemporaryAllocation(of: Int32.self, capacity: groupCount) { entryStarts in
                    let plain = PlainStrings.check(responseGroups, flags: flags, entryStarts: entryStarts)
                    var counter = JSONByteCounter()
                    writeJSON(
                        to: &counter,
                        includingProvenance: includingProvenance,
                        pretty: pretty,
                        capabilityBytes: capabilityBytes,
                        plain: plain
                    )
                    var exact = true
                    let bytes = [UInt8](unsafeUninitializedCapacity: counter.count) { buffer, initialized in
                        guard let base = buffer.baseAddress else { return }
                        var output = JSONByteBuffer(base: base, capacity: counter.count)
                        writeJSON(
                            to: &output,
                            includingProvenance: includingProvenance,
                            pretty: pretty,
                            capabilityBytes: capabilityBytes,
                            plain: plain
                        )
                        exact = !output.overflowed && output.count == counter.count
                        initialized = output.count
                    }
                    if exact { return (bytes, true) }
                    // Unreachable when the two passes agree (the tests hold them to it); correct anyway.
                    var array = JSONByteArray()
                    writeJSON(
                        to: &array,
                        includingProvenance: includingProvenance,
                        pretty: pretty,
                        capabilityBytes: capabilityBytes,
                        plain: plain
                    )
                    return (array.bytes, false)
                }
            }
        }
    }

    /// Writes the JSON from the records: the document's structure as fixed fragments (punctuation,
    /// line break, indentation and key in one piece, pretty or compact), capability names from the
    /// policy's literals, strings of the response and the policy escaped only when they need it.
    private func writeJSON<Output: JSONByteOutput>(
        to output: inout Output,
        includingProvenance: Bool,
        pretty: Bool,
        capabilityBytes: UnsafeRawBufferPointer,
        plain: PlainStrings
    ) {
        let offsets = policy.jsonFragments.capabilityOffsets
        let plainRuleLabels = policy.jsonFragments.plainRuleLabels
        let words = policy.catalog.wordCount

        /// The pretty or the compact form of a fragment.
        func put(_ prettyText: StaticString, _ compactText: StaticString) {
            output.append(pretty ? prettyText : compactText)
        }
        func capability(_ index: Int) {
            output.append(UnsafeRawBufferPointer(rebasing: capabilityBytes[offsets[index]..<offsets[index + 1]]))
        }
        /// An array of capability names from bit words: the top-level one, or a group's (nested).
        func capabilityArray(_ bits: UnsafeBufferPointer<UInt64>, nested: Bool) {
            output.append(byte: UInt8(ascii: "["))
            var first = true
            for (position, word) in bits.enumerated() {
                var remaining = word
                while remaining != 0 {
                    switch (first, nested) {
                    case (true, false): put("\n    ", "")
                    case (false, false): put(",\n    ", ",")
                    case (true, true): put("\n        ", "")
                    case (false, true): put(",\n        ", ",")
                    }
                    first = false
                    capability(position * 64 + remaining.trailingZeroBitCount)
                    remaining &= remaining - 1
                }
            }
            if first {
                output.append(byte: UInt8(ascii: "]"))
            } else if nested {
                put("\n      ]", "]")
            } else {
                put("\n  ]", "]")
            }
        }
        func writeGroupID(_ ordinal: Int32) {
            let first = Int(records.groups[Int(ordinal)].first)
            output.appendQuoted(responseGroups[first].groupID, plain: plain.groupID(first))
        }
        /// Opens the object at `position` of a top-level member's array.
        func openElement(_ position: Int) {
            if position == 0 { put("\n    {", "{") } else { put(",\n    {", ",{") }
        }
        func closeElement() { put("\n    }", "}") }
        func closeArray(_ count: Int) {
            if count > 0 { put("\n  ]", "]") } else { output.append(byte: UInt8(ascii: "]")) }
        }

        put("{\n  \"capabilities\": ", "{\"capabilities\":")
        switch capabilities.bits {
        case .small(let word):
            withUnsafePointer(to: word) { capabilityArray(UnsafeBufferPointer(start: $0, count: 1), nested: false) }
        case .large(let customerWords):
            customerWords.withUnsafeBufferPointer { capabilityArray($0, nested: false) }
        }

        put(",\n  \"groups\": [", ",\"groups\":[")
        for (ordinal, group) in records.groups.enumerated() {
            openElement(ordinal)
            put("\n      \"groupId\": ", "\"groupId\":")
            writeGroupID(Int32(ordinal))
            put(",\n      \"groupType\": ", ",\"groupType\":")
            let first = Int(group.first)
            output.appendQuoted(responseGroups[first].groupType.rawValue, plain: plain.groupType(first))
            put(",\n      \"capabilities\": ", ",\"capabilities\":")
            if words == 1 {
                withUnsafePointer(to: group.bits) {
                    capabilityArray(UnsafeBufferPointer(start: $0, count: 1), nested: true)
                }
            } else {
                records.words.withUnsafeBufferPointer { all in
                    capabilityArray(
                        UnsafeBufferPointer(rebasing: all[Int(group.bits)..<Int(group.bits) + words]),
                        nested: true
                    )
                }
            }
            closeElement()
        }
        closeArray(records.groups.count)

        put(",\n  \"workspaces\": [", ",\"workspaces\":[")
        for (position, membership) in records.memberships.enumerated() {
            openElement(position)
            put("\n      \"workspace\": ", "\"workspace\":")
            output.appendQuoted(workspaceID(of: membership), plain: false)
            put(",\n      \"groupId\": ", ",\"groupId\":")
            writeGroupID(membership.group)
            put(",\n      \"role\": ", ",\"role\":")
            output.append(membership.isAdmin ? "\"admin\"" : "\"member\"")
            closeElement()
        }
        closeArray(records.memberships.count)

        if includingProvenance {
            put(",\n  \"grants\": [", ",\"grants\":[")
            for (position, grant) in records.grants.enumerated() {
                openElement(position)
                put("\n      \"capability\": ", "\"capability\":")
                capability(Int(grant.capability))
                put(",\n      \"groupId\": ", ",\"groupId\":")
                writeGroupID(grant.group)
                put(",\n      \"rule\": ", ",\"rule\":")
                output.appendQuoted(
                    policy.documents[Int(grant.document)].ruleLabels[Int(grant.rule)],
                    plain: plainRuleLabels[Int(grant.document)]
                )
                if let entry = entry(of: grant) {
                    let entryIsPlain = plain.entry(group: Int(grant.entryGroup), role: Int(grant.entryRole))
                    let productID = ruleProductID(entry.productID, document: grant.document)
                    put(",\n      \"productId\": ", ",\"productId\":")
                    if productID != entry.productID {
                        output.appendQuoted(productID, plain: false)
                        put(",\n      \"sandboxProductId\": ", ",\"sandboxProductId\":")
                    }
                    output.appendQuoted(entry.productID, plain: entryIsPlain)
                    put(",\n      \"role\": ", ",\"role\":")
                    output.appendQuoted(entry.role.rawValue, plain: entryIsPlain)
                }
                closeElement()
            }
            closeArray(records.grants.count)

            put(",\n  \"denials\": [", ",\"denials\":[")
            for (position, denial) in records.denials.enumerated() {
                openElement(position)
                put("\n      \"capability\": ", "\"capability\":")
                capability(Int(denial.capability))
                put(",\n      \"groupId\": ", ",\"groupId\":")
                writeGroupID(denial.group)
                put(",\n      \"rule\": ", ",\"rule\":")
                output.appendQuoted(
                    policy.documents[Int(denial.document)].ruleLabels[Int(denial.rule)],
                    plain: plainRuleLabels[Int(denial.document)]
                )
                closeElement()
            }
            closeArray(records.denials.count)
        }

        put(",\n  \"notes\": [", ",\"notes\":[")
        if records.groups.contains(where: { $0.flags != 0 }) {
            let notes = notes
            for (position, note) in notes.enumerated() {
                if position == 0 { put("\n    ", "") } else { put(",\n    ", ",") }
                output.appendQuoted(note, plain: false)
            }
            closeArray(notes.count)
        } else {
            closeArray(0)
        }
        if let groupsSource {
            put(",\n  \"groupsSource\": ", ",\"groupsSource\":")
            output.appendQuoted(groupsSource.name, plain: false)
        }
        if let groupsFetchedAt {
            put(",\n  \"groupsFetchedAt\": ", ",\"groupsFetchedAt\":")
            output.appendQuoted(Timestamp.rfc3339(groupsFetchedAt), plain: false)
        }
        if let policyRevision {
            put(",\n  \"policyRevision\": ", ",\"policyRevision\":")
            output.appendQuoted(policyRevision, plain: false)
        }
        put("\n}", "}")
    }
}

/// Which of the response's strings need no escape, checked once per encoding: per group its id and
/// type, per role entry its product id and role together.
struct PlainStrings {
    /// Per group: bit 0 the id is plain, bit 1 the type; then per role entry (in response order)
    /// 1 when both its strings are plain.
    let flags: UnsafeBufferPointer<UInt8>
    /// The index in `flags` of each group's first role entry.
    let entryStarts: UnsafeBufferPointer<Int32>

    func groupID(_ group: Int) -> Bool { flags[group] & 1 != 0 }
    func groupType(_ group: Int) -> Bool { flags[group] & 2 != 0 }
    func entry(group: Int, role: Int) -> Bool { flags[Int(entryStarts[group]) + role] != 0 }

    /// Checks the strings of `groups` into the buffers (`groups.count` plus the entries' count
    /// flags, `groups.count` starts).
    static func check(
        _ groups: [GroupEntry],
        flags: UnsafeMutableBufferPointer<UInt8>,
        entryStarts: UnsafeMutableBufferPointer<Int32>
    ) -> PlainStrings {
        func isPlain(_ text: String) -> Bool { JSONEscaping.withUTF8(text) { !JSONEscaping.needsEscaping($0) } }
        var next = groups.count
        for (index, group) in groups.enumerated() {
            flags[index] = (isPlain(group.groupID) ? 1 : 0) | (isPlain(group.groupType.rawValue) ? 2 : 0)
            entryStarts[index] = Int32(next)
            for entry in group.roles {
                flags[next] = isPlain(entry.productID) && isPlain(entry.role.rawValue) ? 1 : 0
                next += 1
            }
        }
        return PlainStrings(flags: UnsafeBufferPointer(flags), entryStarts: UnsafeBufferPointer(entryStarts))
    }
}
