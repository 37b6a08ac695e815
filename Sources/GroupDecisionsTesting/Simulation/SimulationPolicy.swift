import Foundation
import GroupPolicy
import Synchronization

/// The policy a fleet simulation's services decide with.
///
/// A seat in a team lets its holder use the team's space, and an admin seat manage it. The
/// simulation judges the groups a decision was made from, not its capabilities; the policy only
/// has to load.
enum SimulationPolicy {
    static let json = """
        {
          "format": "group-policy/v1",
          "id": "fleet-simulation",
          "description": "The fleet simulation's teams: a seat uses the team's space, an admin seat manages it.",
          "capabilities": {
            "team.use": "Use the team's space",
            "team.manage": "Manage the team"
          },
          "rules": [
            {
              "id": "seats-use",
              "match": { "groupType": "ORGANIZATION", "productId": "\(SimulatedWorld.teamProduct)", "role": "*" },
              "capabilities": ["team.use"]
            },
            {
              "id": "admins-manage",
              "match": { "groupType": "ORGANIZATION", "productId": "\(SimulatedWorld.teamProduct)", "role": "ADMIN" },
              "capabilities": ["team.manage"]
            }
          ]
        }
        """

    /// The policy file, written once per process in the temporary directory (a `PolicyStore` loads
    /// from a path).
    private static let path = Mutex<String?>(nil)

    /// A store of the policy.
    static func store() throws -> PolicyStore {
        let path = try path.withLock { path -> String in
            if let path { return path }
            let file = FileManager.default.temporaryDirectory
                .appendingPathComponent("group-decisions-fleet-simulation-\(UUID().uuidString).json").path
            try Data(json.utf8).write(to: URL(fileURLWithPath: file))
            path = file
            return file
        }
        return try PolicyStore(contentsOf: path)
    }
}
