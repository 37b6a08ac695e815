import Foundation
import ServingTestSupport
import Testing

/// The measurement scripts in `Scripts/` start the decision server with the test key and read other files of the
/// repository by path; a path that moved breaks them only when someone runs them, long after. (Splitting the test
/// targets moved the key to `Tests/ServingTestSupport`, and all five scripts naming it then failed to start a server.)
@Suite("Scripts' paths")
struct ScriptPathsTests {
    @Test("every path under Tests/ a script names exists")
    func pathsExist() throws {
        let scripts = TestFiles.packageRoot.appending(path: "Scripts")
        let names = try FileManager.default.contentsOfDirectory(atPath: scripts.path).sorted()
        let pattern = /Tests\/[A-Za-z0-9_\/.-]+/
        var named: [String] = []
        var missing: [String] = []
        for name in names {
            // A folder (the DocC snippets' package) holds no script to start a server with.
            var isFolder: ObjCBool = false
            let path = scripts.appending(path: name).path
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue { continue }
            let text = try String(contentsOf: scripts.appending(path: name), encoding: .utf8)
            for match in text.matches(of: pattern) {
                let path = String(match.output)
                named.append(path)
                if !FileManager.default.fileExists(atPath: TestFiles.packageRoot.appending(path: path).path) {
                    missing.append("\(name): \(path)")
                }
            }
        }
        #expect(named.count >= 5)
        #expect(missing == [])
    }
}
