extension String {
    /// The text with the first occurrence of `target` replaced (unchanged if there is none).
    package func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let start = indices.first(where: { self[$0...].hasPrefix(target) }) else { return self }
        return String(self[..<start]) + replacement + String(self[index(start, offsetBy: target.count)...])
    }
}
