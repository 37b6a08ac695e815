import AppStoreGroups
import GroupDecisions
import GroupPolicy

/// The candidate policy of `--candidate-policies`: loaded beside the live policies, reloaded as
/// they are, and compared with every decision the service serves (`GET /shadow`).
///
/// A candidate that does not load changes nothing but the shadow report: the server serves without
/// it, says why once per distinct problem, and tries again at each reload interval until it loads.
enum CandidatePolicies {
    /// The candidate as it loads now; or, after logging it, why it does not.
    static func load(_ path: String, reloadInterval: Duration) -> (store: PolicyStore?, problem: String?) {
        do {
            let store = try PolicyStore(contentsOf: path, reloadInterval: reloadInterval)
            loaded(store, from: path)
            return (store, nil)
        } catch {
            let problem = notLoaded(path, error, reloadInterval: reloadInterval)
            ServerLog.line(problem)
            return (nil, problem)
        }
    }

    /// Keeps the candidate reloaded, or loads it first.
    ///
    /// Without a candidate, tries to load it at each reload interval and gives it to `service` once
    /// it loads, logging each problem once (the one `load` logged included). Runs until cancelled.
    static func run(
        _ first: (store: PolicyStore?, problem: String?),
        path: String,
        reloadInterval: Duration,
        service: GroupDecisionService
    ) async throws {
        if let store = first.store {
            try await store.run()
            return
        }
        var lastProblem = first.problem
        while true {
            try await Task.sleep(for: reloadInterval)
            do {
                let store = try PolicyStore(contentsOf: path, reloadInterval: reloadInterval)
                loaded(store, from: path)
                service.candidatePolicies = store
                try await store.run()
                return
            } catch let error as GroupPolicyError {
                let problem = notLoaded(path, error, reloadInterval: reloadInterval)
                if problem != lastProblem { ServerLog.line(problem) }
                lastProblem = problem
            }
        }
    }

    /// Logs the candidate's revision and warnings, and from now on each of its reloads.
    private static func loaded(_ store: PolicyStore, from path: String) {
        for warning in store.current.warnings { ServerLog.line("candidate policies: \(warning)") }
        ServerLog.line(
            "candidate policies \(store.revision) loaded from \(path): every decision is compared with them (GET /shadow)"
        )
        _ = store.addReloadHandler { outcome, revision in
            switch outcome {
            case .reloaded:
                ServerLog.line(
                    "candidate policies reloaded (revision \(revision)): the shadow report starts again"
                )
            case .failed(let error):
                let reason = error.description.split(separator: "\n").joined(separator: "; ")
                ServerLog.line(
                    "candidate policies not reloaded, revision \(revision) is still compared: \(reason)"
                )
            }
        }
    }

    private static func notLoaded(_ path: String, _ error: GroupPolicyError, reloadInterval: Duration) -> String {
        let reason = error.description.split(separator: "\n").joined(separator: "; ")
        return "candidate policies in \(path) do not load, nothing is compared (trying again every "
            + "\(reloadInterval.components.seconds) s): \(reason)"
    }
}
