import Foundation

/// Where the server keeps installs as the admin API and the dashboard read them (what the
/// attribution writes is ``AttributionStore``). One of the stores ``ServerStore`` is made of (the
/// SQL engines implement every one); a part of the server that needs only this takes only this.
package protocol InstallStore: Sendable {
    /// `project`'s newest installs (those attributed to `link`, when given), at most `limit`
    /// (at most 1,000).
    func installs(project: String, link: String?, limit: Int) async throws -> [InstallRecord]

    /// `project`'s installs in time order after `cursor`, at most `limit` (at most 10,000).
    func installs(project: String, after cursor: TimeCursor?, limit: Int) async throws -> [InstallRecord]

    /// The newest install of `project` with `fingerprintHash`.
    func latestInstall(project: String, fingerprintHash: String) async throws -> InstallRecord?
}
