/// One member of a JSON object, in document order.
package struct JSONMember: Equatable {
    package var key: String
    package var keyOffset: Int
    package var value: JSONNode

    /// A member named `key` (written at `keyOffset`) holding `value`.
    package init(key: String, keyOffset: Int, value: JSONNode) {
        self.key = key
        self.keyOffset = keyOffset
        self.value = value
    }
}
