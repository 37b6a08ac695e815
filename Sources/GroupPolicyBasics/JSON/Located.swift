/// A value read from a file, with where it was.
package struct Located<Value> {
    package var value: Value
    package var offset: Int
    package var path: JSONPath

    /// `value`, read at byte `offset` of its document, at `path`.
    package init(value: Value, offset: Int, path: JSONPath) {
        self.value = value
        self.offset = offset
        self.path = path
    }
}

extension Located: Equatable where Value: Equatable {}

extension Located: Sendable where Value: Sendable {}
