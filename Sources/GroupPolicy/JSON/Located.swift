/// A value read from a file, with where it was.
package struct Located<Value> {
    package var value: Value
    package var offset: Int
    package var path: JSONPath
}

extension Located: Equatable where Value: Equatable {}

extension Located: Sendable where Value: Sendable {}
