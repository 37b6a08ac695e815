/// What the files of a policy set read so far hold together: a set is evaluated as one policy, so
/// ``PolicyLimits`` bound the set as a whole (its bytes, rules and listed names), not each file
/// alone; otherwise a directory of a hundred files at the limits would cost a hundred times them.
struct PolicySetTotals {
    var bytes = 0
    var rules = 0
    var workspaces = 0
    var invariants = 0
    var listedNames = 0
}
