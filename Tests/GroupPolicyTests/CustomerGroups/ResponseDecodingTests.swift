import GroupPolicyTestSupport
import Testing

@testable import GroupPolicy

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

@Suite struct ResponseDecodingTests {
    @Test func decodesApplesSandboxPlaceholderExactly() throws {
        let data = try Data(contentsOf: URL(filePath: repositoryFile("Examples/sandbox-placeholder.json")))
        let decoded = try GetCustomerGroupsResponse(jsonBytes: data)
        #expect(decoded == GetCustomerGroupsResponse.sandboxPlaceholder)
        #expect(decoded.groups[0].groupID == "900000000000000000")
        #expect(decoded.groups[0].groupType == .organization)
        #expect(
            decoded.groups[0].roles == [
                RoleEntry(productID: "example.productId.one", role: .admin),
                RoleEntry(productID: "example.productId.two", role: .unassigned),
            ]
        )
    }

    @Test func missingRolesIsAnEmptyList() throws {
        let decoded = try response(#"{"groups":[{"groupId":"1","groupType":"CONSUMER"}]}"#)
        #expect(decoded.groups == [GroupEntry(groupID: "1", groupType: .consumer, roles: [])])
    }

    @Test func nullRolesIsAnEmptyList() throws {
        let decoded = try response(#"{"groups":[{"groupId":"1","groupType":"CONSUMER","roles":null}]}"#)
        #expect(decoded.groups[0].roles == [])
    }

    @Test func emptyGroups() throws {
        #expect(try response(#"{"groups":[]}"#).groups == [])
    }

    @Test func unknownValuesKeepTheirRawString() throws {
        let decoded = try response(
            #"{"groups":[{"groupId":"1","groupType":"ENTERPRISE","roles":[{"productId":"p","role":"OWNER"}]}]}"#
        )
        #expect(decoded.groups[0].groupType.rawValue == "ENTERPRISE")
        #expect(decoded.groups[0].groupType.isKnown == false)
        #expect(decoded.groups[0].roles[0].role == Role("OWNER"))
        #expect(decoded.groups[0].roles[0].role.isKnown == false)
        #expect(Role.unassigned.rawValue == "NONE")
    }

    @Test func unknownKeysAreSkipped() throws {
        let decoded = try response(
            #"{"extra":{"deep":[1,2,{"x":null}]},"groups":[{"groupId":"1","note":"hi","groupType":"CONSUMER"}],"more":true}"#
        )
        #expect(decoded.groups == [GroupEntry(groupID: "1", groupType: .consumer)])
    }

    /// A key read once in an object is a duplicate the second time, even when its first value was
    /// `null`; a key the object skips may repeat, even one another object of Apple's reads.
    @Test func duplicateKeysAreTheKeysAnObjectReads() throws {
        #expect {
            try GetGroupMembersResponse(
                jsonBytes: bytes(#"{"members":[],"hasMore":false,"paginationToken":null,"paginationToken":"t"}"#)
            )
        } throws: {
            ($0 as? GroupPolicyError)?.description == #"<input>:1:54: paginationToken: duplicate key 'paginationToken'"#
        }
        #expect {
            try response(#"{"groups":[{"groupId":"1","groupType":"O","roles":null,"roles":[]}]}"#)
        } throws: {
            ($0 as? GroupPolicyError)?.description == #"<input>:1:56: groups[0].roles: duplicate key 'roles'"#
        }
        let skipped = try response(
            #"{"role":"A","groups":[{"groupId":"1","groupType":"O","groups":1,"groups":2}],"role":"B"}"#
        )
        #expect(skipped == GetCustomerGroupsResponse(groups: [GroupEntry(groupID: "1", groupType: "O")]))
    }

    @Test func escapesDecode() throws {
        let decoded = try response(#"{"groups":[{"groupId":"a\"b\\c\u00e9\ud83d\ude00","group\u0054ype":"CONSUMER"}]}"#)
        #expect(decoded.groups[0].groupID == "a\"b\\cé😀")
        #expect(decoded.groups[0].groupType == .consumer)
    }

    struct Failure: CustomTestStringConvertible {
        var json: String
        var path: String
        var line: Int
        var column: Int
        var message: String
        var testDescription: String { path + ": " + message }
    }

    static let failures: [Failure] = [
        Failure(
            json: #"{"groups":[{"groupType":"CONSUMER"}]}"#,
            path: "groups[0].groupId",
            line: 1,
            column: 12,
            message: "missing required key 'groupId'"
        ),
        Failure(
            json: #"{"groups":[{"groupId":"1"}]}"#,
            path: "groups[0].groupType",
            line: 1,
            column: 12,
            message: "missing required key 'groupType'"
        ),
        Failure(
            json: "{\"groups\":[\n {\"groupId\":1,\"groupType\":\"CONSUMER\"}]}",
            path: "groups[0].groupId",
            line: 2,
            column: 13,
            message: "expected a string, found a number"
        ),
        Failure(
            json: #"{"groups":{}}"#,
            path: "groups",
            line: 1,
            column: 11,
            message: "expected an array, found an object"
        ),
        Failure(
            json: #"{"groups":[{"groupId":"1","groupType":"ORGANIZATION","roles":[{"productId":"p","role":7}]}]}"#,
            path: "groups[0].roles[0].role",
            line: 1,
            column: 87,
            message: "expected a string, found a number"
        ),
        Failure(
            json: #"{"groups":[{"groupId":"1","groupType":"ORGANIZATION","roles":[{"role":"ADMIN"}]}]}"#,
            path: "groups[0].roles[0].productId",
            line: 1,
            column: 63,
            message: "missing required key 'productId'"
        ),
        Failure(
            json: #"{"groups":[{"groupId":"1","groupType":"ORGANIZATION","roles":"ADMIN"}]}"#,
            path: "groups[0].roles",
            line: 1,
            column: 62,
            message: "expected an array, found a string"
        ),
        Failure(json: #"{}"#, path: "groups", line: 1, column: 1, message: "missing required key 'groups'"),
        Failure(json: #"[]"#, path: "$", line: 1, column: 1, message: "expected an object, found an array"),
        // Text is not a boolean because it starts with a `t`, nor null because it starts with an `n`.
        Failure(
            json: "this is not JSON",
            path: "$",
            line: 1,
            column: 1,
            message: "invalid literal (expected true, false or null)"
        ),
        Failure(
            json: #"{"groups":[{"groupId":nope}]}"#,
            path: "groups[0].groupId",
            line: 1,
            column: 23,
            message: "invalid literal (expected true, false or null)"
        ),
        Failure(
            json: #"{"groups":[{"groupId":"1","groupId":"2","groupType":"CONSUMER"}]}"#,
            path: "groups[0].groupId",
            line: 1,
            column: 27,
            message: "duplicate key 'groupId'"
        ),
        Failure(
            json: #"{"groups":[{"groupId":"1","groupType":"CONSUMER"}"#,
            path: "groups",
            line: 1,
            column: 50,
            message: "expected ',' or ']', found end of input"
        ),
        Failure(
            json: #"{"groups":[]} x"#,
            path: "$",
            line: 1,
            column: 15,
            message: "unexpected 'x' after the JSON value"
        ),
        Failure(
            json: #"{"groups":[{"groupId":"1\u12","groupType":"CONSUMER"}]}"#,
            path: "groups[0].groupId",
            line: 1,
            column: 25,
            message: "invalid \\u escape (expected 4 hex digits)"
        ),
        Failure(json: #"{"groups":[],}"#, path: "$", line: 1, column: 14, message: "expected a string key, found '}'"),
        // Paths at the deepest level the decoder reads, past the first element of each array.
        Failure(
            json: #"{"groups":[{"groupId":"1","groupType":"CONSUMER"},{"groupId":"2","groupType":"ORGANIZATION","#
                + #""roles":[{"productId":"a","role":"ADMIN"},{"productId":1,"role":"NONE"}]}]}"#,
            path: "groups[1].roles[1].productId",
            line: 1,
            column: 148,
            message: "expected a string, found a number"
        ),
        Failure(
            json: #"{"groups":[{"groupId":"1","groupType":"O","roles":[{"productId":"a","role":"A"},"#
                + #"{"productId":"b","role":"A","role":"B"}]}]}"#,
            path: "groups[0].roles[1].role",
            line: 1,
            column: 109,
            message: "duplicate key 'role'"
        ),
        Failure(
            json: #"{"groups":[{"groupId":"1","groupType":"O","roles":[{"productId":"a","role":"A"},"#
                + #"{"productId":"b"}]}]}"#,
            path: "groups[0].roles[1].role",
            line: 1,
            column: 81,
            message: "missing required key 'role'"
        ),
    ]

    @Test(arguments: failures)
    func malformedResponsesNameTheirPath(_ failure: Failure) {
        do {
            _ = try GetCustomerGroupsResponse(jsonBytes: bytes(failure.json), fileName: "r.json")
            Issue.record("decoded \(failure.json)")
        } catch {
            #expect(error.code == .invalidResponse)
            #expect(error.jsonPath == failure.path)
            #expect(error.message == failure.message)
            #expect(error.location == SourcePosition(file: "r.json", line: failure.line, column: failure.column))
            #expect(
                error.description == "r.json:\(failure.line):\(failure.column): \(failure.path): \(failure.message)"
            )
        }
    }

    @Test func invalidUTF8IsRejectedWithItsOffset() {
        var data = bytes(#"{"groups":[{"groupId":"ab","groupType":"CONSUMER"}]}"#)
        data[24] = 0xFF
        #expect(throws: GroupPolicyError.self) { try GetCustomerGroupsResponse(jsonBytes: data) }
        do {
            _ = try GetCustomerGroupsResponse(jsonBytes: data)
        } catch {
            #expect(error.message == "invalid UTF-8 byte 0xFF")
            #expect(error.location?.column == 25)
        }
    }

    @Test func limitsAreEnforced() {
        let tooMany = #"{"groups":[{"groupId":"1","groupType":"CONSUMER"},{"groupId":"2","groupType":"CONSUMER"}]}"#
        #expect {
            try GetCustomerGroupsResponse(jsonBytes: bytes(tooMany), limits: ResponseLimits(maximumGroups: 1))
        } throws: { error in
            let error = error as? GroupPolicyError
            return error?.code == .limitExceeded && error?.message == "more than 1 groups"
                && error?.jsonPath == "groups[1]"
        }
        #expect {
            try GetCustomerGroupsResponse(jsonBytes: bytes(tooMany), limits: ResponseLimits(maximumBytes: 10))
        } throws: { error in
            (error as? GroupPolicyError)?.message == "document of 90 bytes is over the limit of 10 bytes"
        }
        let deep = "{\"groups\":[],\"x\":" + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}"
        #expect {
            try GetCustomerGroupsResponse(jsonBytes: bytes(deep))
        } throws: { error in
            (error as? GroupPolicyError)?.message == "nesting deeper than 32 levels"
        }
        let roles = (0..<3).map { #"{"productId":"p\#($0)","role":"NONE"}"# }.joined(separator: ",")
        #expect {
            try GetCustomerGroupsResponse(
                jsonBytes: bytes(#"{"groups":[{"groupId":"1","groupType":"ORGANIZATION","roles":[\#(roles)]}]}"#),
                limits: ResponseLimits(maximumRoleEntriesPerGroup: 2)
            )
        } throws: { error in
            (error as? GroupPolicyError)?.jsonPath == "groups[0].roles[2]"
        }
    }

    @Test func encodesBackToApplesShape() throws {
        let decoded = try response(
            #"{"groups":[{"groupType":"ORGANIZATION","groupId":"1","roles":[{"role":"ADMIN","productId":"p"}]},{"groupId":"2","groupType":"CONSUMER"}]}"#
        )
        #expect(
            decoded.jsonString()
                == #"{"groups":[{"groupId":"1","groupType":"ORGANIZATION","roles":[{"productId":"p","role":"ADMIN"}]},{"groupId":"2","groupType":"CONSUMER"}]}"#
        )
        #expect(try GetCustomerGroupsResponse(jsonBytes: decoded.jsonBytes()) == decoded)
    }

    @Test func codableMatchesTheFastDecoder() throws {
        let text =
            #"{"groups":[{"groupId":"1","groupType":"ORGANIZATION","roles":[{"productId":"p","role":"NONE"}]},{"groupId":"2","groupType":"CONSUMER"}]}"#
        let viaCodable = try JSONDecoder().decode(GetCustomerGroupsResponse.self, from: Data(text.utf8))
        #expect(viaCodable == (try response(text)))
        let reencoded = try JSONDecoder().decode(
            GetCustomerGroupsResponse.self,
            from: try JSONEncoder().encode(viaCodable)
        )
        #expect(reencoded == viaCodable)
    }

    @Test func decodesGroupMembersPages() throws {
        let page = try GetGroupMembersResponse(
            jsonBytes: bytes(
                #"{"members":[{"appTransactionId":"7"},{"appTransactionId":"8"}],"hasMore":true,"paginationToken":"t1"}"#
            )
        )
        #expect(
            page
                == GetGroupMembersResponse(
                    members: [GroupMemberEntry(appTransactionID: "7"), GroupMemberEntry(appTransactionID: "8")],
                    hasMore: true,
                    paginationToken: "t1"
                )
        )
        let placeholder = try GetGroupMembersResponse(
            jsonBytes: bytes(#"{ "members": [ { "appTransactionId": "700000000000000000" } ], "hasMore": false }"#)
        )
        #expect(placeholder == .sandboxPlaceholder)
        #expect(try GetGroupMembersResponse(jsonBytes: placeholder.jsonBytes()) == placeholder)
        #expect(
            page.jsonString()
                == #"{"members":[{"appTransactionId":"7"},{"appTransactionId":"8"}],"hasMore":true,"paginationToken":"t1"}"#
        )
        #expect {
            try GetGroupMembersResponse(jsonBytes: bytes(#"{"members":[]}"#))
        } throws: { ($0 as? GroupPolicyError)?.jsonPath == "hasMore" }
        #expect {
            try GetGroupMembersResponse(jsonBytes: bytes(#"{"members":[{}],"hasMore":false}"#))
        } throws: { ($0 as? GroupPolicyError)?.jsonPath == "members[0].appTransactionId" }
        #expect {
            try GetGroupMembersResponse(jsonBytes: bytes(#"{"members":[],"hasMore":"no"}"#))
        } throws: { ($0 as? GroupPolicyError)?.message == "expected a boolean, found a string" }
    }
}
