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
                    let plain = PlainStrings.check(
                        responseGroups,
                        entries: includingProvenance && !records.grants.isEmpty,
                        flags: flags,
                        entryStarts: entryStarts
                    )
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
    /// line break, indentation, key and the quotes around the value in one piece, pretty or
    /// compact), capability names from the policy's literals, strings of the response and the policy
    /// escaped only when they need it.
    private func writeJSON<Output: JSONByteOutput>(
        to output: inout Output,
        includingProvenance: Bool,
        pretty: Bool,
        capabilityBytes: UnsafeRawBufferPointer,
        plain: PlainStrings
    ) {
        let fragments = policy.jsonFragments
        let words = policy.catalog.wordCount

        /// The pretty or the compact form of a fragment.
        @inline(__always)
        func put(_ prettyText: StaticString, _ compactText: StaticString) {
            output.append(pretty ? prettyText : compactText)
        }
        fragments.capabilityOffsets.withUnsafeBufferPointer { offsets in
            responseGroups.withUnsafeBufferPointer { responseGroups in
                records.groups.withUnsafeBufferPointer { groups in
                    @inline(__always)
                    func capability(_ index: Int) {
                        output.append(
                            UnsafeRawBufferPointer(rebasing: capabilityBytes[offsets[index]..<offsets[index + 1]])
                        )
                    }
                    /// An array of capability names from bit words: the top-level one, or a group's.
                    func capabilityArray(_ bits: UnsafeBufferPointer<UInt64>, nested: Bool) {
                        output.append(byte: UInt8(ascii: "["))
                        var first = true
                        for (position, word) in bits.enumerated() {
                            var remaining = word
                            while remaining != 0 {
                                if pretty {
                                    switch (first, nested) {
                                    case (true, false): output.append("\n    ")
                                    case (false, false): output.append(",\n    ")
                                    case (true, true): output.append("\n        ")
                                    case (false, true): output.append(",\n        ")
                                    }
                                } else if !first {
                                    output.append(byte: UInt8(ascii: ","))
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
                    /// A group's id, unquoted (the fragments hold the quotes).
                    @inline(__always)
                    func writeGroupID(_ ordinal: Int32) {
                        let first = Int(groups[Int(ordinal)].first)
                        output.appendEscaped(responseGroups[first].groupID, plain: plain.groupID(first))
                    }
                    func closeArray(_ count: Int) {
                        if count > 0 { put("\n  ]", "]") } else { output.append(byte: UInt8(ascii: "]")) }
                    }

                    put("{\n  \"capabilities\": ", "{\"capabilities\":")
                    switch capabilities.bits {
                    case .small(let word):
                        withUnsafePointer(to: word) {
                            capabilityArray(UnsafeBufferPointer(start: $0, count: 1), nested: false)
                        }
                    case .large(let customerWords):
                        customerWords.withUnsafeBufferPointer { capabilityArray($0, nested: false) }
                    }

                    put(",\n  \"groups\": [", ",\"groups\":[")
                    for (ordinal, group) in groups.enumerated() {
                        if ordinal == 0 {
                            put("\n    {\n      \"groupId\": \"", "{\"groupId\":\"")
                        } else {
                            put(",\n    {\n      \"groupId\": \"", ",{\"groupId\":\"")
                        }
                        writeGroupID(Int32(ordinal))
                        put("\",\n      \"groupType\": \"", "\",\"groupType\":\"")
                        let first = Int(group.first)
                        output.appendEscaped(responseGroups[first].groupType.rawValue, plain: plain.groupType(first))
                        put("\",\n      \"capabilities\": ", "\",\"capabilities\":")
                        if words == 1 {
                            withUnsafePointer(to: group.bits) {
                                capabilityArray(UnsafeBufferPointer(start: $0, count: 1), nested: true)
                            }
                        } else {
                            records.words.withUnsafeBufferPointer { all in
                                let start = Int(group.bits)
                                capabilityArray(UnsafeBufferPointer(rebasing: all[start..<start + words]), nested: true)
                            }
                        }
                        put("\n    }", "}")
                    }
                    closeArray(groups.count)

                    put(",\n  \"workspaces\": [", ",\"workspaces\":[")
                    for (position, membership) in records.memberships.enumerated() {
                        if position == 0 {
                            put("\n    {\n      \"workspace\": \"", "{\"workspace\":\"")
                        } else {
                            put(",\n    {\n      \"workspace\": \"", ",{\"workspace\":\"")
                        }
                        output.appendEscaped(workspaceID(of: membership), plain: false)
                        put("\",\n      \"groupId\": \"", "\",\"groupId\":\"")
                        writeGroupID(membership.group)
                        if membership.isAdmin {
                            put("\",\n      \"role\": \"admin\"\n    }", "\",\"role\":\"admin\"}")
                        } else {
                            put("\",\n      \"role\": \"member\"\n    }", "\",\"role\":\"member\"}")
                        }
                    }
                    closeArray(records.memberships.count)

                    if includingProvenance {
                        let documents = policy.documents
                        put(",\n  \"grants\": [", ",\"grants\":[")
                        for (position, grant) in records.grants.enumerated() {
                            if position == 0 {
                                put("\n    {\n      \"capability\": ", "{\"capability\":")
                            } else {
                                put(",\n    {\n      \"capability\": ", ",{\"capability\":")
                            }
                            capability(Int(grant.capability))
                            put(",\n      \"groupId\": \"", ",\"groupId\":\"")
                            writeGroupID(grant.group)
                            put("\",\n      \"rule\": \"", "\",\"rule\":\"")
                            let document = Int(grant.document)
                            output.appendEscaped(
                                documents[document].ruleLabels[Int(grant.rule)],
                                plain: fragments.plainRuleLabels[document]
                            )
                            if grant.entryGroup >= 0 {
                                let entryGroup = Int(grant.entryGroup)
                                let entryRole = Int(grant.entryRole)
                                let productID = responseGroups[entryGroup].roles[entryRole].productID
                                let entryIsPlain = plain.entry(group: entryGroup, role: entryRole)
                                put("\",\n      \"productId\": \"", "\",\"productId\":\"")
                                if sandbox {
                                    let ruleProductID = ruleProductID(productID, document: grant.document)
                                    if ruleProductID != productID {
                                        output.appendEscaped(ruleProductID, plain: false)
                                        put("\",\n      \"sandboxProductId\": \"", "\",\"sandboxProductId\":\"")
                                    }
                                }
                                output.appendEscaped(productID, plain: entryIsPlain)
                                put("\",\n      \"role\": \"", "\",\"role\":\"")
                                output.appendEscaped(
                                    responseGroups[entryGroup].roles[entryRole].role.rawValue,
                                    plain: entryIsPlain
                                )
                            }
                            put("\"\n    }", "\"}")
                        }
                        closeArray(records.grants.count)

                        put(",\n  \"denials\": [", ",\"denials\":[")
                        for (position, denial) in records.denials.enumerated() {
                            if position == 0 {
                                put("\n    {\n      \"capability\": ", "{\"capability\":")
                            } else {
                                put(",\n    {\n      \"capability\": ", ",{\"capability\":")
                            }
                            capability(Int(denial.capability))
                            put(",\n      \"groupId\": \"", ",\"groupId\":\"")
                            writeGroupID(denial.group)
                            put("\",\n      \"rule\": \"", "\",\"rule\":\"")
                            let document = Int(denial.document)
                            output.appendEscaped(
                                documents[document].ruleLabels[Int(denial.rule)],
                                plain: fragments.plainRuleLabels[document]
                            )
                            put("\"\n    }", "\"}")
                        }
                        closeArray(records.denials.count)
                    }

                    put(",\n  \"notes\": [", ",\"notes\":[")
                    if groups.contains(where: { $0.flags != 0 }) {
                        let notes = notes
                        for (position, note) in notes.enumerated() {
                            if position == 0 { put("\n    ", "") } else { put(",\n    ", ",") }
                            output.appendQuoted(note, plain: false)
                        }
                        closeArray(notes.count)
                    } else {
                        closeArray(0)
                    }
                }
            }
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

    /// Checks the strings of `groups` (and of their role entries when `entries`) into the buffers
    /// (`groups.count` plus the entries' count flags, `groups.count` starts).
    static func check(
        _ groups: [GroupEntry],
        entries: Bool,
        flags: UnsafeMutableBufferPointer<UInt8>,
        entryStarts: UnsafeMutableBufferPointer<Int32>
    ) -> PlainStrings {
        func isPlain(_ text: String) -> Bool { JSONEscaping.withUTF8(text) { !JSONEscaping.needsEscaping($0) } }
        var next = groups.count
        for (index, group) in groups.enumerated() {
            flags[index] = (isPlain(group.groupID) ? 1 : 0) | (isPlain(group.groupType.rawValue) ? 2 : 0)
            entryStarts[index] = Int32(next)
            guard entries else { continue }
            for entry in group.roles {
                flags[next] = isPlain(entry.productID) && isPlain(entry.role.rawValue) ? 1 : 0
                next += 1
            }
        }
        return PlainStrings(flags: UnsafeBufferPointer(flags), entryStarts: UnsafeBufferPointer(entryStarts))
    }
}
