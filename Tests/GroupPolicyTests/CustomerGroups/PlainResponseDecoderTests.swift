import GroupPolicyBasics
import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one-pass decoder of the plain form against the reference decoder: on every body, the plain
/// decoder either declines or returns exactly what the reference returns, and the public
/// initialisers (plain first, reference otherwise) return the reference's value or error.
@Suite struct PlainResponseDecoderTests {
    /// What the reference decoder makes of a body: the value, or the failure's path, message and
    /// offset (which the public error's location is computed from).
    enum Outcome<Value: Equatable>: Equatable {
        case value(Value)
        case failure(path: String, message: String, offset: Int, isLimit: Bool)
    }

    static func reference(_ bytes: [UInt8], limits: ResponseLimits) -> Outcome<GetCustomerGroupsResponse> {
        bytes.withUnsafeBufferPointer { buffer in
            var decoder = ResponseDecoder(bytes: buffer, limits: limits)
            do throws(ResponseDecoder.Failure) {
                return .value(try decoder.decodeCustomerGroups())
            } catch {
                return .failure(
                    path: error.path.description,
                    message: error.message,
                    offset: error.offset,
                    isLimit: error.isLimit
                )
            }
        }
    }

    static func referenceMembers(_ bytes: [UInt8], limits: ResponseLimits) -> Outcome<GetGroupMembersResponse> {
        bytes.withUnsafeBufferPointer { buffer in
            var decoder = ResponseDecoder(bytes: buffer, limits: limits)
            do throws(ResponseDecoder.Failure) {
                return .value(try decoder.decodeGroupMembers())
            } catch {
                return .failure(
                    path: error.path.description,
                    message: error.message,
                    offset: error.offset,
                    isLimit: error.isLimit
                )
            }
        }
    }

    static func plain(_ bytes: [UInt8], limits: ResponseLimits) -> GetCustomerGroupsResponse? {
        bytes.withUnsafeBufferPointer { buffer in
            var decoder = PlainResponseDecoder(bytes: buffer, limits: limits)
            return decoder?.decodeCustomerGroups()
        }
    }

    static func plainMembers(_ bytes: [UInt8], limits: ResponseLimits) -> GetGroupMembersResponse? {
        bytes.withUnsafeBufferPointer { buffer in
            var decoder = PlainResponseDecoder(bytes: buffer, limits: limits)
            return decoder?.decodeGroupMembers()
        }
    }

    /// The public error as the same fields as a reference failure.
    static func located<Value>(_ error: GroupPolicyError, in bytes: [UInt8], like reference: Outcome<Value>) -> Bool {
        guard case .failure(let path, let message, let offset, let isLimit) = reference else { return false }
        let position = SourceText(fileName: nil, bytes: bytes).location(ofOffset: offset)
        return error.jsonPath == path && error.message == message && error.location == position
            && error.code == (isLimit ? .limitExceeded : .invalidResponse)
    }

    // MARK: Apple's form is read by the plain decoder

    @Test func applesFormIsPlain() throws {
        let bodies = [
            #"{"groups":[]}"#,
            #"{"groups":[{"groupId":"322101701997453880","groupType":"CONSUMER"}]}"#,
            #"{"groups":[{"groupId":"1","groupType":"ORGANIZATION","roles":[{"productId":"p4","role":"MEMBER"},"#
                + #"{"productId":"p20","role":"NONE"},{"productId":"p932","role":"ADMIN"}]}]}"#,
            #"{"groups":[{"groupId":"1","groupType":"ORGANIZATION","roles":[]}]}"#,
        ]
        for body in bodies {
            let bytes = Array(body.utf8)
            let decoded = try #require(Self.plain(bytes, limits: .default))
            #expect(Self.reference(bytes, limits: .default) == .value(decoded))
        }
        let roles = try #require(Self.plain(Array(bodies[2].utf8), limits: .default)).groups[0].roles
        #expect(
            roles == [
                RoleEntry(productID: "p4", role: Role("MEMBER")),
                RoleEntry(productID: "p20", role: .unassigned),
                RoleEntry(productID: "p932", role: .admin),
            ]
        )
    }

    @Test(arguments: [
        "consumer-member.json", "no-groups.json", "organization-admin.json", "sandbox-placeholder.json",
        "seat-holder.json", "several-groups.json",
    ])
    func recordedExamplesAreReadInOnePass(_ name: String) throws {
        let bytes = Array(try Data(contentsOf: URL(filePath: repositoryFile("Examples/" + name))))
        let decoded = try #require(Self.plain(bytes, limits: .default))
        #expect(Self.reference(bytes, limits: .default) == .value(decoded))
    }

    @Test func validButUnusualFormsAreReadToo() throws {
        // Whitespace, another key order, unknown keys, `null` roles: still plain.
        let body = """
            { "extra" : [1, {"a": null}], "groups" : [
              { "roles" : null , "groupType" : "CONSUMER", "note": "x", "groupId" : "7" },
              { "groupType":"ORGANIZATION","groupId":"8","roles":[ {"role":"ADMIN", "productId":"p"} ] }
            ] }
            """
        let decoded = try #require(Self.plain(Array(body.utf8), limits: .default))
        #expect(
            decoded.groups == [
                GroupEntry(groupID: "7", groupType: .consumer),
                GroupEntry(groupID: "8", groupType: .organization, roles: [RoleEntry(productID: "p", role: .admin)]),
            ]
        )
    }

    @Test func declinesWhatOnlyTheReferenceReads() {
        // Escapes, non-ASCII, a byte order mark: valid, but left to the reference.
        let bodies: [[UInt8]] = [
            Array(#"{"groups":[{"groupId":"a\"b","groupType":"CONSUMER"}]}"#.utf8),
            Array(#"{"groups":[{"group\u0049d":"1","groupType":"CONSUMER"}]}"#.utf8),
            Array(#"{"groups":[{"groupId":"é","groupType":"CONSUMER"}]}"#.utf8),
            [0xEF, 0xBB, 0xBF] + Array(#"{"groups":[]}"#.utf8),
        ]
        for bytes in bodies {
            #expect(Self.plain(bytes, limits: .default) == nil)
            guard case .value(let value) = Self.reference(bytes, limits: .default) else {
                Issue.record("the reference rejects \(bytes)")
                continue
            }
            #expect((try? GetCustomerGroupsResponse(jsonBytes: bytes)) == value)
        }
    }

    @Test func arraysLongerThanTheStagingAreComplete() throws {
        let entries = (0..<40).map { #"{"productId":"p\#($0)","role":"ADMIN"}"# }.joined(separator: ",")
        let groups = (0..<20).map { #"{"groupId":"\#($0)","groupType":"ORGANIZATION","roles":[\#(entries)]}"# }
        let bytes = Array(#"{"groups":[\#(groups.joined(separator: ","))]}"#.utf8)
        let decoded = try #require(Self.plain(bytes, limits: .default))
        #expect(decoded.groups.count == 20)
        #expect(decoded.groups.map(\.groupID) == (0..<20).map { "\($0)" })
        #expect(decoded.groups[19].roles.map(\.productID) == (0..<40).map { "p\($0)" })
        #expect(Self.reference(bytes, limits: .default) == .value(decoded))
    }

    // MARK: Differential

    /// Random bodies of both shapes, then byte mutations, under random limits: the plain decoder
    /// agrees with the reference whenever it answers, and the public initialisers equal the reference.
    @Test(.cpuBound, arguments: [1, 2, 3, 4] as [UInt64])
    func agreesWithTheReference(seed: UInt64) throws {
        var random = BodyGenerator(seed: seed)
        var plainAnswers = 0
        var cases = 0
        for round in 0..<2_500 {
            let limits = random.limits()
            let members = round % 5 == 4
            var bytes = Array((members ? random.membersBody() : random.groupsBody()).utf8)
            if random.chance(0.5) { random.mutate(&bytes) }
            cases += 1
            if members {
                let reference = Self.referenceMembers(bytes, limits: limits)
                if let plain = Self.plainMembers(bytes, limits: limits) {
                    plainAnswers += 1
                    #expect(reference == .value(plain), "\(String(decoding: bytes, as: UTF8.self))")
                }
                do {
                    let decoded = try GetGroupMembersResponse(jsonBytes: bytes, limits: limits)
                    #expect(reference == .value(decoded))
                } catch {
                    #expect(Self.located(error, in: bytes, like: reference), "\(error)")
                }
            } else {
                let reference = Self.reference(bytes, limits: limits)
                if let plain = Self.plain(bytes, limits: limits) {
                    plainAnswers += 1
                    #expect(reference == .value(plain), "\(String(decoding: bytes, as: UTF8.self))")
                }
                do {
                    let decoded = try GetCustomerGroupsResponse(jsonBytes: bytes, limits: limits)
                    #expect(reference == .value(decoded))
                } catch {
                    #expect(Self.located(error, in: bytes, like: reference), "\(error)")
                }
            }
        }
        // Both paths are exercised: neither decoder answers every case alone.
        #expect(cases == 2_500)
        #expect(plainAnswers > 250 && plainAnswers < 2_250, "plain answered \(plainAnswers)")
    }
}

/// Group documents in many textual forms, valid and not.
private struct BodyGenerator {
    var random: RandomInputs

    init(seed: UInt64) { random = RandomInputs(seed: seed) }

    mutating func chance(_ probability: Double) -> Bool { random.chance(probability) }

    mutating func limits() -> ResponseLimits {
        guard chance(0.3) else { return .default }
        return ResponseLimits(
            maximumBytes: chance(0.2) ? random.int(10...400) : 1 << 20,
            maximumGroups: random.int(0...4),
            maximumRoleEntriesPerGroup: random.int(0...4),
            maximumMembers: random.int(0...3),
            maximumDepth: random.int(3...8)
        )
    }

    /// Whitespace, sometimes.
    mutating func space() -> String { chance(0.1) ? random.pick([" ", "\n", "\t ", "\r\n  "]) : "" }

    /// A string token: usually plain, sometimes with an escape or a non-ASCII character.
    mutating func string(_ value: String) -> String {
        switch random.int(0...19) {
        case 0: return "\"\\u0041" + value + "\""
        case 1: return "\"" + value + "\\/\""
        case 2: return "\"" + value + "\u{e9}\""
        default: return "\"" + value + "\""
        }
    }

    /// A key token: usually as spelled, sometimes with an escape (still the same key).
    mutating func key(_ name: String) -> String {
        guard chance(0.03), let first = name.unicodeScalars.first else { return "\"" + name + "\"" }
        let hex = String(first.value, radix: 16)
        return "\"\\u" + String(repeating: "0", count: 4 - hex.count) + hex + name.dropFirst() + "\""
    }

    /// A value of another JSON type, or nested, for wrong types and unknown keys.
    mutating func otherValue() -> String {
        random.pick([
            "7", "-1.5e3", "true", "false", "null", "{}", "[]", #"{"a":[1,{"b":null}]}"#, #""s""#, "[[[[[1]]]]]",
        ])
    }

    /// An object from members: sometimes reordered, duplicated, missing one, or with an unknown key.
    mutating func object(_ members: [(String, String)]) -> String {
        var members = members
        if chance(0.2) { members.shuffle(using: &random.generator) }
        if chance(0.05), let member = members.first { members.append(member) }
        if chance(0.05), !members.isEmpty { members.remove(at: random.int(0...(members.count - 1))) }
        if chance(0.1) { members.insert((random.pick(["extra", "groupIds", "Roles", "x"]), otherValue()), at: 0) }
        if chance(0.03), !members.isEmpty {
            members[random.int(0...(members.count - 1))].1 = otherValue()
        }
        let text = members.map { key($0.0) + space() + ":" + space() + $0.1 }.joined(separator: "," + space())
        return "{" + space() + text + space() + "}"
    }

    mutating func array(_ elements: [String]) -> String {
        "[" + space() + elements.joined(separator: space() + "," + space()) + space() + "]"
    }

    mutating func roleEntry() -> String {
        object([
            ("productId", string(random.pick(RandomInputs.manyProducts.filter { $0.utf8.count < 20 }))),
            ("role", string(random.pick(RandomInputs.roles))),
        ])
    }

    mutating func group() -> String {
        var members = [
            ("groupId", string(random.pick(RandomInputs.manyGroupIDs))),
            ("groupType", string(random.pick(RandomInputs.types))),
        ]
        switch random.int(0...9) {
        case 0: break
        case 1: members.append(("roles", "null"))
        default:
            var entries: [String] = []
            for _ in 0..<random.int(0...6) { entries.append(roleEntry()) }
            members.append(("roles", array(entries)))
        }
        return object(members)
    }

    mutating func groupsBody() -> String {
        var groups: [String] = []
        for _ in 0..<random.int(0...4) { groups.append(group()) }
        return space() + object([("groups", array(groups))]) + space()
    }

    mutating func membersBody() -> String {
        var entries: [String] = []
        for _ in 0..<random.int(0...4) {
            entries.append(object([("appTransactionId", string(random.pick(RandomInputs.manyGroupIDs)))]))
        }
        var members = [("members", array(entries)), ("hasMore", random.pick(["true", "false"]))]
        if chance(0.5) { members.append(("paginationToken", chance(0.3) ? "null" : string("token"))) }
        return space() + object(members) + space()
    }

    /// One to three byte-level edits: truncation, deletion, insertion, replacement, duplication.
    mutating func mutate(_ bytes: inout [UInt8]) {
        let interesting: [UInt8] = Array(#""\{}[],: n0eE-.tfu"#.utf8) + [0x80, 0xC3, 0xE9, 0x00, 0x1F, 0x7F, 0x0A]
        for _ in 0..<random.int(1...3) where !bytes.isEmpty {
            let index = random.int(0...(bytes.count - 1))
            switch random.int(0...4) {
            case 0: bytes.removeSubrange(index...)
            case 1: bytes.remove(at: index)
            case 2: bytes.insert(random.pick(interesting), at: index)
            case 3: bytes[index] = random.pick(interesting)
            default:
                let end = min(bytes.count, index + random.int(1...12))
                bytes.insert(contentsOf: bytes[index..<end], at: index)
            }
        }
    }
}
