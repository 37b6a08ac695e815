import GroupPolicyBasics

/// The pages whose scenario matrix is being computed: one at a time per page.
///
/// The page never sends a matrix request while one is on its way (it asks again with the latest
/// edit once the answer comes); a second one from the same page, say from a stale copy of the
/// script, is refused at once (429) instead of doubling the work. A page names itself with the
/// random `page` id it draws when it loads.
final class MatrixFlights: Sendable {
    /// The longest page id taken.
    static let maximumPageIDBytes = 64

    private let pages = Locked<Set<String>>([])

    /// Marks the page's matrix as being computed; `false` when it already was.
    func begin(_ page: String) -> Bool {
        pages.withLock { $0.insert(page).inserted }
    }

    /// Marks it done.
    func end(_ page: String) {
        _ = pages.withLock { $0.remove(page) }
    }
}
