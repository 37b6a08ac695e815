package import GroupPolicyBasics

extension DiagnosticCollector {
    /// The Get Customer Groups response written inline at `node` of the document being read, or
    /// `nil` after an `invalidValue` error located inside it (`path` is the node's).
    ///
    /// The strict decoder reads the node's own bytes, so a failure's offset and path are relative
    /// to the node; the error adds them to the node's. Policy test files embed responses this way.
    package func customerGroupsResponse(_ node: JSONNode, _ path: JSONPath) -> GetCustomerGroupsResponse? {
        let bytes = source.bytes[node.offset..<node.end]
        let result = Array(bytes).withUnsafeBufferPointer { buffer in
            var decoder = ResponseDecoder(bytes: buffer, limits: .default)
            return Result { () throws(ResponseDecoder.Failure) in try decoder.decodeCustomerGroups() }
        }
        switch result {
        case .success(let response):
            return response
        case .failure(let failure):
            error(
                .invalidValue,
                at: node.offset + failure.offset,
                path.appending(contentsOf: failure.path),
                "invalid response: \(failure.message)"
            )
            return nil
        }
    }
}
