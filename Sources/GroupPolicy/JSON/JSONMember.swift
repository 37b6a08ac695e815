/// One member of a JSON object, in document order.
package struct JSONMember: Equatable {
    package var key: String
    var keyOffset: Int
    package var value: JSONNode
}
