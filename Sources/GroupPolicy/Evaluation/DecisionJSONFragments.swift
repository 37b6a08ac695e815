/// The parts of a decision's JSON that depend only on the policy, prepared once when it is compiled:
/// each capability name as a JSON string literal, and per document whether its rule labels need
/// escaping at all.
struct DecisionJSONFragments: Sendable {
    /// The capability names' literals (quoted, escaped), back to back in catalog order.
    let capabilityBytes: [UInt8]
    /// Capability `i`'s literal is `capabilityBytes[capabilityOffsets[i]..<capabilityOffsets[i + 1]]`.
    let capabilityOffsets: [Int]
    /// Per document: no rule label needs an escape (each is written as it stands).
    let plainRuleLabels: [Bool]

    init(catalog: CapabilityCatalog, documents: [CompiledDocument]) {
        var bytes: [UInt8] = []
        var offsets = [0]
        offsets.reserveCapacity(catalog.names.count + 1)
        for name in catalog.names {
            bytes.append(contentsOf: JSONWriter.quoted(name).utf8)
            offsets.append(bytes.count)
        }
        capabilityBytes = bytes
        capabilityOffsets = offsets
        plainRuleLabels = documents.map { document in
            document.ruleLabels.allSatisfy { label in
                !JSONEscaping.withUTF8(label) { JSONEscaping.needsEscaping($0) }
            }
        }
    }
}
