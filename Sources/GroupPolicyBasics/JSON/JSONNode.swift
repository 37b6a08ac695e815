/// A JSON value and the byte range it spans in its document.
package struct JSONNode: Equatable {
    package var offset: Int
    package var value: JSONValue
    /// The offset just past the value's last character.
    package var end: Int = 0

    /// A node for `value`, starting at `offset` and ending just before `end`.
    package init(offset: Int, value: JSONValue, end: Int = 0) {
        self.offset = offset
        self.value = value
        self.end = end
    }
}
