import GroupPolicy
import GroupPolicyBasics
import GroupPolicyTooling
import HTTPServing

/// Saving: a file is written only when the directory with the edit checks without errors, and
/// only over the version the page was editing.
extension PlaygroundApp {
    /// `POST /api/save`: writes one edited file, when the directory with that edit (and no other)
    /// checks without errors, and the file on disk is still the version the edit was made from
    /// (`versions`, as `GET /api/files` gave it, or as a conflict's answer gave it when the author
    /// overwrites on purpose); one save at a time (see ``PolicyFileSaver``).
    ///
    /// A file that changed on disk since is not written: the answer is 409 with both texts, the
    /// one on disk (`disk`, `diskVersion`) and the edit (`edit`), for the page to show what changed.
    func save(_ request: PlaygroundRequest) throws(PlaygroundFailure) -> HTTPResponse {
        guard let name = request.file else {
            throw PlaygroundFailure(.badRequest, "the request names no 'file' to save")
        }
        let saver = PolicyFileSaver(directory: directory)
        let path = try saver.destination(of: name)
        guard let text = request.files?[name] else {
            throw PlaygroundFailure(.badRequest, "the request holds no edit of '\(name)' to save")
        }
        guard let version = request.versions?[name].map(FileVersion.init) else {
            throw PlaygroundFailure(
                .badRequest,
                "the request names no version of '\(name)' in 'versions' (the version the edit was made from)"
            )
        }
        let bytes = Array(text.utf8)
        let edited = try workbench([name: bytes])
        let saved = saving.withLock { _ in
            Result { () throws(PlaygroundFailure) -> FileVersion in
                try saver.expect(version, of: path, name: name, edit: text)
                let report: PolicyCheckReport
                do throws(GroupPolicyError) {
                    report = try edited.check()
                } catch {
                    throw PlaygroundFailure(.unprocessableContent, "not saved: \(error.message)")
                }
                guard report.summary.errors == 0 else {
                    let errors = report.summary.errors
                    throw PlaygroundFailure(
                        .unprocessableContent,
                        "not saved: with this edit the directory checks with \(errors) \(errors == 1 ? "error" : "errors")"
                    )
                }
                try saver.write(bytes, to: path) { () throws(PlaygroundFailure) in
                    // Again just before the rename: an editor may have written while the edit was checked.
                    try saver.expect(version, of: path, name: name, edit: text)
                }
                return FileVersion(of: bytes)
            }
        }
        let written = try saved.get()
        return .json(
            PlaygroundJSON.object([
                "saved": PlaygroundJSON.string(name),
                "bytes": String(bytes.count),
                "version": PlaygroundJSON.string(written.description),
            ])
        )
    }
}
