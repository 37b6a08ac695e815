import GroupPolicyBasics

extension Decision {
    /// The decision as the DocC article "Decision JSON" documents it: keys in the documented order
    /// (`capabilities`, `groups`, `workspaces`, [`grants`, `denials`,] `notes`); capability lists
    /// sorted, pretty with two-space indentation or compact.
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
    /// the measured size; otherwise they come from the general writer over the materialised arrays).
    func measuredJSONBytes(includingProvenance: Bool, pretty: Bool) -> (bytes: [UInt8], exact: Bool) {
        let written = writtenJSONBytes(includingProvenance: includingProvenance, pretty: pretty)
        if written.exact { return written }
        // Unreachable when the two passes agree (the tests hold them to it).
        return (materializedJSONBytes(includingProvenance: includingProvenance, pretty: pretty), false)
    }

    /// The JSON bytes written from the records, and whether the bytes filled exactly the measured size.
    private func writtenJSONBytes(includingProvenance: Bool, pretty: Bool) -> (bytes: [UInt8], exact: Bool) {
        let fragments = policy.jsonFragments
        let withEntries = includingProvenance && !records.grants.isEmpty
        var stringCount = 2 * responseGroups.count
        if withEntries { for group in responseGroups { stringCount += 2 * group.roles.count } }
        return withScratchBuffer(of: Int32.self, capacity: 2 * stringCount + 1 + responseGroups.count) { indices in
            // The response's strings, escaped: their offsets, each group's first string, and which
            // strings are written (a group's id and type; an entry's only when a grant names it).
            let offsets = UnsafeMutableBufferPointer(rebasing: indices[0...stringCount])
            let groupBase = UnsafeMutableBufferPointer(
                rebasing: indices[(stringCount + 1)..<(stringCount + 1 + responseGroups.count)]
            )
            let needed = UnsafeMutableBufferPointer(rebasing: indices[(stringCount + 1 + responseGroups.count)...])
            var next = 0
            for (group, groupEntry) in responseGroups.enumerated() {
                groupBase[group] = Int32(next)
                needed[next] = 1
                needed[next + 1] = 1
                next += 2
                guard withEntries else { continue }
                for index in next..<next + 2 * groupEntry.roles.count { needed[index] = 0 }
                next += 2 * groupEntry.roles.count
            }
            for grant in records.grants where withEntries && grant.entryGroup >= 0 {
                let index = Int(groupBase[Int(grant.entryGroup)]) + 2 + 2 * Int(grant.entryRole)
                needed[index] = 1
                needed[index + 1] = 1
            }
            // An upper bound (an escape is at most six bytes), so each string is read once.
            var bound = 0
            var index = 0
            ResponseStrings.forEach(in: responseGroups, entries: withEntries) { text in
                if needed[index] != 0 { bound += 6 * text.utf8.count }
                index += 1
            }
            return withScratchBuffer(of: UInt8.self, capacity: bound) { escaped in
                var filled = JSONByteBuffer(base: escaped.baseAddress, capacity: escaped.count)
                var filledIndex = 0
                offsets[0] = 0
                ResponseStrings.forEach(in: responseGroups, entries: withEntries) { text in
                    if needed[filledIndex] != 0 { filled.appendEscaped(text, plain: false) }
                    filledIndex += 1
                    offsets[filledIndex] = Int32(filled.count)
                }
                let strings = ResponseStrings(
                    bytes: UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: escaped[0..<filled.count])),
                    offsets: UnsafeBufferPointer(offsets),
                    groupBase: UnsafeBufferPointer(groupBase)
                )
                return fragments.capabilityBytes.withUnsafeBytes { capabilityBytes in
                    fragments.ruleBytes.withUnsafeBytes { ruleBytes in
                        var counter = JSONByteCounter()
                        writeJSON(
                            to: &counter,
                            includingProvenance: includingProvenance,
                            pretty: pretty,
                            capabilityBytes: capabilityBytes,
                            ruleBytes: ruleBytes,
                            strings: strings
                        )
                        var exact = !filled.overflowed
                        let bytes = [UInt8](unsafeUninitializedCapacity: counter.count) { buffer, initialized in
                            var output = JSONByteBuffer(base: buffer.baseAddress, capacity: counter.count)
                            writeJSON(
                                to: &output,
                                includingProvenance: includingProvenance,
                                pretty: pretty,
                                capabilityBytes: capabilityBytes,
                                ruleBytes: ruleBytes,
                                strings: strings
                            )
                            exact = exact && !output.overflowed && output.count == counter.count
                            initialized = output.count
                        }
                        return (bytes, exact)
                    }
                }
            }
        }
    }

    /// The JSON written from the materialised arrays through the general writer: slower, and the
    /// fallback should the measured size ever be wrong.
    private func materializedJSONBytes(includingProvenance: Bool, pretty: Bool) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty)
        writer.beginObject()
        writer.member("capabilities", strings: capabilities.names)
        writer.member("groups", objects: groups) { writer, group in
            writer.member("groupId", group.groupID)
            writer.member("groupType", group.groupType.rawValue)
            writer.member("capabilities", strings: group.capabilities.names)
        }
        writer.member("workspaces", objects: workspaces) { writer, membership in
            writer.member("workspace", membership.workspace.id)
            writer.member("groupId", membership.groupID)
            writer.member("role", membership.role.rawValue)
        }
        if includingProvenance {
            writer.member("grants", array: grants) { $0.grant($1) }
            writer.member("denials", array: denials) { $0.denial($1) }
        }
        writer.member("notes", strings: notes)
        writer.endObject()
        return writer.output
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
        ruleBytes: UnsafeRawBufferPointer,
        strings: ResponseStrings
    ) {
        let fragments = policy.jsonFragments
        let words = policy.catalog.wordCount

        /// The pretty or the compact form of a fragment.
        @inline(__always)
        func put(_ prettyText: StaticString, _ compactText: StaticString) {
            output.append(pretty ? prettyText : compactText)
        }
        fragments.capabilityOffsets.withUnsafeBufferPointer { offsets in
            fragments.ruleOffsets.withUnsafeBufferPointer { ruleOffsets in
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
                        output.append(strings.groupID(Int(groups[Int(ordinal)].first)))
                    }
                    /// A rule's label, unquoted.
                    @inline(__always)
                    func writeRule(document: Int32, rule: Int32) {
                        let index = fragments.documentRuleBase[Int(document)] + Int(rule)
                        output.append(
                            UnsafeRawBufferPointer(
                                rebasing: ruleBytes[Int(ruleOffsets[index])..<Int(ruleOffsets[index + 1])]
                            )
                        )
                    }
                    /// Opens the object at `position` of an array with its first key: a comma before
                    /// every object but the first.
                    @inline(__always)
                    func openObject(_ position: Int, _ prettyText: StaticString, _ compactText: StaticString) {
                        if position > 0 { output.append(byte: UInt8(ascii: ",")) }
                        put(prettyText, compactText)
                    }
                    /// The members a grant and a denial start with: the capability, the group and the
                    /// rule (left open, unquoted), after the separator for the record at `position`.
                    func openRecord(
                        _ position: Int,
                        capability index: Int32,
                        group: Int32,
                        document: Int32,
                        rule: Int32
                    ) {
                        openObject(position, "\n    {\n      \"capability\": ", "{\"capability\":")
                        capability(Int(index))
                        put(",\n      \"groupId\": \"", ",\"groupId\":\"")
                        writeGroupID(group)
                        put("\",\n      \"rule\": \"", "\",\"rule\":\"")
                        writeRule(document: document, rule: rule)
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
                        openObject(ordinal, "\n    {\n      \"groupId\": \"", "{\"groupId\":\"")
                        writeGroupID(Int32(ordinal))
                        put("\",\n      \"groupType\": \"", "\",\"groupType\":\"")
                        output.append(strings.groupType(Int(group.first)))
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
                        openObject(position, "\n    {\n      \"workspace\": \"", "{\"workspace\":\"")
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
                        put(",\n  \"grants\": [", ",\"grants\":[")
                        for (position, grant) in records.grants.enumerated() {
                            openRecord(
                                position,
                                capability: grant.capability,
                                group: grant.group,
                                document: grant.document,
                                rule: grant.rule
                            )
                            if grant.entryGroup >= 0 {
                                let entryGroup = Int(grant.entryGroup)
                                let entryRole = Int(grant.entryRole)
                                put("\",\n      \"productId\": \"", "\",\"productId\":\"")
                                if sandbox {
                                    let productID = responseGroups[entryGroup].roles[entryRole].productID
                                    let ruleProductID = ruleProductID(productID, document: grant.document)
                                    if !ruleProductID.isExactly(productID) {
                                        output.appendEscaped(ruleProductID, plain: false)
                                        put("\",\n      \"sandboxProductId\": \"", "\",\"sandboxProductId\":\"")
                                    }
                                }
                                output.append(strings.productID(group: entryGroup, role: entryRole))
                                put("\",\n      \"role\": \"", "\",\"role\":\"")
                                output.append(strings.role(group: entryGroup, role: entryRole))
                            }
                            put("\"\n    }", "\"}")
                        }
                        closeArray(records.grants.count)

                        put(",\n  \"denials\": [", ",\"denials\":[")
                        for (position, denial) in records.denials.enumerated() {
                            openRecord(
                                position,
                                capability: denial.capability,
                                group: denial.group,
                                document: denial.document,
                                rule: denial.rule
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
        put("\n}", "}")
    }
}

extension Decision {
    /// The JSON of ``jsonBytes(includingProvenance:pretty:)`` with string members after `notes`, in
    /// the order given: how a decision service appends what it knows about the answer (the DocC
    /// article "Decision JSON", section "Freshness and revision").
    package func jsonBytes(
        includingProvenance: Bool,
        pretty: Bool,
        trailingMembers: [(key: String, value: String)]
    ) -> [UInt8] {
        let document = jsonBytes(includingProvenance: includingProvenance, pretty: pretty)
        guard !trailingMembers.isEmpty else { return document }
        // The document ends with its closing brace, on a line of its own when pretty; the members go
        // before it, into one allocation of the final size (a large Decision is megabytes).
        let closing: [UInt8] = Array((pretty ? "\n}" : "}").utf8)
        let members = trailingMembers.map { key, value in
            Array(
                ((pretty ? ",\n  " : ",") + JSONWriter.quoted(key) + (pretty ? ": " : ":") + JSONWriter.quoted(value))
                    .utf8
            )
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(document.count + members.reduce(0) { $0 + $1.count })
        bytes.append(contentsOf: document[..<(document.count - closing.count)])
        for member in members { bytes.append(contentsOf: member) }
        bytes.append(contentsOf: closing)
        return bytes
    }
}
