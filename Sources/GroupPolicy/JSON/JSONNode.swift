/// A JSON value and the byte range it spans in its document.
package struct JSONNode: Equatable {
    package var offset: Int
    package var value: JSONValue
    /// The offset just past the value's last character.
    var end: Int = 0
}
