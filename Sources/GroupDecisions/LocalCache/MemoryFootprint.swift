import AppStoreGroups
import GroupPolicy

/// What a cached answer costs on the heap, as the local caches count it against their byte bound.
///
/// Counted from the allocations the entry holds, as they were measured with a 64-bit glibc
/// allocator: each block takes its size plus an 8-byte header, rounded up to 16 bytes, at least 32.
/// A decoded answer holds its array of groups and each group's array of role entries (counted by
/// their capacity, which a decoder growing a long list leaves up to twice the count), and every
/// string longer than 15 bytes (shorter ones live inside the string value; the known group types and
/// roles are shared): a 32-byte header and the bytes with their terminating NUL, rounded up to 16.
/// Apple's bytes are one array. Each entry adds ``entryOverhead`` and its customer id. How close
/// the estimate is, measured, is in the DocC article "Serving decisions at fleet scale", section
/// "Memory and the cost of a hit".
enum MemoryFootprint {
    /// What one entry costs besides the allocations it holds: its slot, its index entry and the
    /// pages its allocations pin (measured in the same section).
    static let entryOverhead = 1_024

    /// The bytes an allocation of `requested` bytes takes.
    @inline(__always)
    static func block(_ requested: Int) -> Int {
        max(32, (requested + 8 + 15) & ~15)
    }

    /// The heap bytes a string holds: none when it is stored inline (15 UTF-8 bytes or fewer).
    @inline(__always)
    static func heapBytes(of text: String) -> Int {
        let count = text.utf8.count
        return count <= 15 ? 0 : block(32 + ((count + 1 + 15) & ~15))
    }

    /// The heap bytes of an array's storage: none when it has no capacity.
    @inline(__always)
    static func heapBytes<Element>(of array: [Element]) -> Int {
        array.capacity == 0 ? 0 : block(32 + array.capacity * MemoryLayout<Element>.stride)
    }

    /// The heap bytes a decoded answer holds.
    static func heapBytes(of response: GetCustomerGroupsResponse) -> Int {
        var bytes = heapBytes(of: response.groups)
        for group in response.groups {
            bytes += heapBytes(of: group.groupID)
            if !group.groupType.isKnown { bytes += heapBytes(of: group.groupType.rawValue) }
            bytes += heapBytes(of: group.roles)
            for role in group.roles {
                bytes += heapBytes(of: role.productID)
                if !role.role.isKnown { bytes += heapBytes(of: role.role.rawValue) }
            }
        }
        return bytes
    }

    /// What keeping an entry for a customer costs: the overhead, the id, and the decoded groups or
    /// Apple's bytes.
    static func cost(of entry: LocalGroupsCache.Entry, customerID: String) -> Int {
        let held =
            if let decoded = entry.decoded {
                heapBytes(of: decoded)
            } else {
                heapBytes(of: entry.answer.body)
            }
        return entryOverhead + heapBytes(of: customerID) + held
    }
}
