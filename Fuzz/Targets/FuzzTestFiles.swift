// libFuzzer target: policy test files from arbitrary bytes. Relative paths in them resolve against
// a file name inside the repository's Policies/ (given by FUZZ_POLICIES_DIR), so seeds that name a
// real policy load it and run their cases.
//
// Compiled together with Sources/GroupPolicy and Sources/GroupPolicyTooling by Fuzz/fuzz.sh.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let fuzzTestFileName: String = {
    let directory = getenv("FUZZ_POLICIES_DIR").map { String(cString: $0) } ?? "Policies"
    return directory + "/fuzz.tests.json"
}()

/// libFuzzer's entry point: one input, as bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestFiles(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    do {
        let suite = try PolicyTestSuite(jsonBytes: bytes, fileName: fuzzTestFileName)
        for result in suite.run() {
            _ = result.failures.count
        }
    } catch let error as GroupPolicyError {
        guard !error.diagnostics.isEmpty || error.code == .unreadableFile else {
            preconditionFailure("a test-file error without diagnostics: \(error)")
        }
    } catch {
        preconditionFailure("an error that is not a GroupPolicyError: \(error)")
    }
    return 0
}
