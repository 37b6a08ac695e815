import GroupPolicyBasics
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The Decision's JSON writer (compact records, pre-escaped fragments, measured then written)
/// against a straightforward writer built from the materialised arrays, byte for byte.
///
/// Random policies, policy sets, responses and contexts, with group ids, product ids and rule ids
/// that need escaping, catalogs of one and several words, duplicate and many groups, and the
/// optional freshness keys; pretty and compact, with and without provenance. Seeds are fixed.
@Suite(.cpuBound) struct DecisionJSONDifferentialTests {
    /// Group ids and product ids that need escaping (quotes, backslashes, control characters at
    /// several positions around the eight-byte blocks), and non-ASCII ones that do not.
    static let escapedGroupIDs = [
        "g\"0", "g\\1", "\u{e9}t\u{e9}-group", "tab\tid", "ctl\u{01}", "12345678\"", "1234567\u{1F}89",
        "a-long-group-id-without-escapes-at-all",
    ]
    static let escapedProducts = ["p\"q", "prod\\uct", "p\u{1F}", "com.example.\u{e9}l\u{e8}ve", "12345678901234\n"]

    @Test(arguments: 0..<8)
    func writerMatchesTheReference(batch: Int) throws {
        var random = RandomInputs(seed: UInt64(batch) &* 2_654_435_761 &+ 97)
        let groupIDs = RandomInputs.groupIDs + Self.escapedGroupIDs
        let products = RandomInputs.products + Self.escapedProducts
        /// The same ids as they appear inside the policy's JSON strings.
        func inJSON(_ values: [String]) -> [String] {
            values.map { String(JSONWriter.quoted($0).dropFirst().dropLast()) }
        }
        var compared = 0
        var withGrants = 0
        var withDenials = 0
        var withWorkspaces = 0
        var withNotes = 0
        var escapes = 0
        for iteration in 0..<150 {
            let capabilityCount = random.chance(0.2) ? random.int(60...140) : random.int(1...8)
            random.groupCount = random.chance(0.1) ? 33...40 : 0...5
            let documentCount = random.chance(0.25) ? 2 : 1
            var documents: [PolicyDocument] = []
            for index in 0..<documentCount {
                // Rule ids that need escaping in about half the policies.
                let escaped = random.chance(0.5)
                let id = "policy\(index)"
                random.groupIDs = inJSON(groupIDs)
                random.products = inJSON(products)
                var json = random.policyJSON(id: id, capabilityCount: capabilityCount, contentEvery: 5)
                if escaped { json = json.replacingOccurrences(of: #""id": "r"#, with: #""id": "r\"\\\u0007\u00e9-"#) }
                documents.append(try Policy.parseDocument(bytes(json), fileName: "random.json", limits: .default))
            }
            let policy = Policy(documents: documents)
            random.groupIDs = groupIDs
            random.products = products
            for _ in 0..<4 {
                let response = random.response()
                let context = random.context()
                let decision = policy.evaluate(response, in: context)
                // What a decision service appends after `notes`.
                var trailing: [(key: String, value: String)] = []
                if random.chance(0.3) {
                    trailing = [
                        ("groupsSource", random.pick(["live", "cache", "stale"])),
                        (
                            "groupsFetchedAt",
                            Timestamp.rfc3339(Date(timeIntervalSince1970: Double(random.int(0...2_000_000_000)) / 7))
                        ),
                        ("policyRevision", random.pick(["r1", "sha256:\"abc\"\\", "\u{e9}\u{01}"])),
                    ]
                }
                let label = "batch \(batch) iteration \(iteration): \(response.jsonString()) \(context)"
                for (provenance, pretty) in [(false, false), (false, true), (true, false), (true, true)] {
                    let expected = ReferenceDecisionJSON.bytes(
                        decision,
                        includingProvenance: provenance,
                        pretty: pretty,
                        trailing: trailing
                    )
                    let measured = decision.measuredJSONBytes(includingProvenance: provenance, pretty: pretty)
                    let actual =
                        trailing.isEmpty
                        ? measured.bytes
                        : decision.jsonBytes(includingProvenance: provenance, pretty: pretty, trailingMembers: trailing)
                    #expect(measured.exact, "\(label): the measured size was not exact")
                    if expected.contains(UInt8(ascii: "\\")) { escapes += 1 }
                    #expect(
                        actual == expected,
                        "\(label) provenance \(provenance) pretty \(pretty):\n\(String(decoding: actual, as: UTF8.self))"
                    )
                    if actual != expected { return }
                }
                compared += 1
                if decision.grantCount > 0 { withGrants += 1 }
                if decision.denialCount > 0 { withDenials += 1 }
                if decision.workspaceCount > 0 { withWorkspaces += 1 }
                if !decision.notes.isEmpty { withNotes += 1 }
            }
        }
        // The inputs reach every part of the JSON, many times.
        #expect(compared == 600)
        #expect(withGrants > 100)
        #expect(withDenials > 20)
        #expect(withWorkspaces > 50)
        #expect(withNotes > 20)
        #expect(escapes > 200)
    }

    /// The counts agree with the materialised arrays, and the queries with them.
    @Test func countsAndQueriesMatchTheArrays() throws {
        var random = RandomInputs(seed: 7)
        for _ in 0..<200 {
            let json = random.policyJSON(id: "p", capabilityCount: random.int(1...70), contentEvery: 5)
            let policy = Policy(documents: [try Policy.parseDocument(bytes(json), fileName: nil, limits: .default)])
            let decision = policy.evaluate(random.response(), in: random.context())
            #expect(decision.groupCount == decision.groups.count)
            #expect(decision.grantCount == decision.grants.count)
            #expect(decision.denialCount == decision.denials.count)
            #expect(decision.workspaceCount == decision.workspaces.count)
            for group in decision.groups {
                #expect(decision.capabilities(inGroup: group.groupID) == group.capabilities)
                for capability in policy.capabilities {
                    #expect(
                        decision.allows(capability, inGroup: group.groupID) == group.capabilities.contains(capability)
                    )
                }
            }
            for capability in policy.capabilities {
                #expect(decision.grants(of: capability) == decision.grants.filter { $0.capability == capability.name })
            }
            for workspace in Set(decision.workspaces.map(\.workspace)) {
                #expect(decision.memberships(in: workspace) == decision.workspaces.filter { $0.workspace == workspace })
            }
            #expect(decision.capabilities(inGroup: "no-such-group") == nil)
        }
    }

    /// The eight-bytes-at-a-time escape check agrees with the byte-by-byte one, for every byte at
    /// every position of short and longer strings.
    @Test func escapeCheckMatchesTheByteByByteCheck() {
        for length in 1...19 {
            for position in 0..<length {
                for byte in UInt8(0)...UInt8(255) {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = byte
                    let expected = byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
                    let actual = bytes.withUnsafeBufferPointer { JSONWriter.needsEscaping($0) }
                    if actual != expected {
                        Issue.record("length \(length) position \(position) byte \(byte)")
                        return
                    }
                }
            }
        }
    }
}

/// The Decision JSON written the straightforward way: from the materialised arrays, through the
/// general JSON writer (what the decision's writer did before it worked from the records).
enum ReferenceDecisionJSON {
    static func bytes(
        _ decision: Decision,
        includingProvenance: Bool,
        pretty: Bool,
        trailing: [(key: String, value: String)] = []
    ) -> [UInt8] {
        var writer = JSONWriter(pretty: pretty)
        writer.beginObject()
        writer.member("capabilities", strings: decision.capabilities.names)
        writer.key("groups")
        writer.beginArray()
        for group in decision.groups {
            writer.beginObject()
            writer.member("groupId", group.groupID)
            writer.member("groupType", group.groupType.rawValue)
            writer.member("capabilities", strings: group.capabilities.names)
            writer.endObject()
        }
        writer.endArray()
        writer.key("workspaces")
        writer.beginArray()
        for membership in decision.workspaces {
            writer.beginObject()
            writer.member("workspace", membership.workspace.id)
            writer.member("groupId", membership.groupID)
            writer.member("role", membership.role.rawValue)
            writer.endObject()
        }
        writer.endArray()
        if includingProvenance {
            writer.key("grants")
            writer.beginArray()
            for grant in decision.grants {
                writer.beginObject()
                writer.member("capability", grant.capability)
                writer.member("groupId", grant.groupID)
                writer.member("rule", grant.rule)
                if let productID = grant.productID { writer.member("productId", productID) }
                if let sandboxProductID = grant.sandboxProductID { writer.member("sandboxProductId", sandboxProductID) }
                if let role = grant.role { writer.member("role", role.rawValue) }
                writer.endObject()
            }
            writer.endArray()
            writer.key("denials")
            writer.beginArray()
            for denial in decision.denials {
                writer.beginObject()
                writer.member("capability", denial.capability)
                writer.member("groupId", denial.groupID)
                writer.member("rule", denial.rule)
                writer.endObject()
            }
            writer.endArray()
        }
        writer.member("notes", strings: decision.notes)
        for (key, value) in trailing { writer.member(key, value) }
        writer.endObject()
        return writer.output
    }
}
