import GroupPolicyBasics

/// The parts of a decision's JSON that depend only on the policy, prepared once when it is compiled:
/// each capability name as a JSON string literal, and each rule label escaped (without quotes).
///
/// About the label's length plus four bytes per rule.
struct DecisionJSONFragments: Sendable {
    /// The capability names' literals (quoted, escaped), back to back in catalog order.
    let capabilityBytes: [UInt8]
    /// Capability `i`'s literal is `capabilityBytes[capabilityOffsets[i]..<capabilityOffsets[i + 1]]`.
    let capabilityOffsets: [Int]
    /// The rule labels, escaped, back to back: the documents' rules in order.
    let ruleBytes: [UInt8]
    /// Rule `r` of document `d` is `ruleBytes[ruleOffsets[k]..<ruleOffsets[k + 1]]` with
    /// `k = documentRuleBase[d] + r`.
    let ruleOffsets: [UInt32]
    let documentRuleBase: [Int]

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

        var labels: [UInt8] = []
        var labelOffsets: [UInt32] = [0]
        var base: [Int] = []
        for document in documents {
            base.append(labelOffsets.count - 1)
            for label in document.ruleLabels {
                JSONWriter.withUTF8(label) { utf8 in
                    if JSONWriter.needsEscaping(utf8) {
                        JSONWriter.forEachEscapedRun(utf8) { labels.append(contentsOf: $0) }
                    } else {
                        labels.append(contentsOf: utf8)
                    }
                }
                labelOffsets.append(UInt32(truncatingIfNeeded: labels.count))
            }
        }
        ruleBytes = labels
        ruleOffsets = labelOffsets
        documentRuleBase = base
    }
}
