/// Checks on the decision ids the service and the decision server write.
package enum DecisionIDs {
    /// Whether `id` is 8-4-4-4-12 lowercase hex with version 7 and the RFC 9562 variant.
    package static func isVersion7(_ id: String) -> Bool {
        let characters = Array(id.utf8)
        guard characters.count == 36 else { return false }
        for (index, character) in characters.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard character == UInt8(ascii: "-") else { return false }
            } else {
                guard
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(character)
                        || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(character)
                else { return false }
            }
        }
        return characters[14] == UInt8(ascii: "7") && "89ab".utf8.contains(characters[19])
    }
}
