import Foundation

/// Where the server keeps clicks and the landing page's click tokens: stored durably, read back in
/// time order, deleted by the retention. One of the stores ``ServerStore`` is made of (the SQL
/// engines implement every one); a part of the server that needs only this takes only this.
package protocol ClickStore: Sendable {
    /// Stores a click; it is on disk when this returns (writes of concurrent requests are
    /// committed together).
    func recordClick(_ click: ClickRecord) async throws

    /// The clicks on `link`, oldest first.
    func clicks(link: String) async throws -> [ClickRecord]

    /// `link`'s clicks in time order after `cursor`, at most `limit` (at most 10,000): an export
    /// reads them a page at a time.
    func clicks(link: String, after cursor: TimeCursor?, limit: Int) async throws -> [ClickRecord]

    /// Stores a token the landing page hands out, on disk before the page is answered.
    func insertClickToken(_ token: ClickTokenRecord) async throws

    /// Deletes the tokens that expired before `cutoff`; how many.
    func deleteClickTokens(expiredBefore cutoff: Date) async throws -> Int

    /// Deletes up to `limit` clicks made before `date` (the oldest first); how many it deleted.
    func deleteClicks(before date: Date, limit: Int) async throws -> Int

    /// The engine's own upkeep of the click store before ``deleteClicks(before:limit:)``: on
    /// PostgreSQL the day partitions around `now` made and those wholly before `cutoff` dropped;
    /// how many clicks went with them.
    func maintainClickPartitions(now: Date, droppingBefore cutoff: Date?) async throws -> Int

    /// The engine's upkeep of the planner's statistics: on PostgreSQL each click partition that
    /// holds clicks but was never analyzed (after a restore, a bulk import) is analyzed; their
    /// names. Nothing elsewhere.
    @discardableResult
    func analyzeNewClickPartitions() async throws -> [String]
}

package struct TimeCursor: Sendable, Hashable {
    package var date: Date
    package var id: String

    package init(date: Date, id: String) {
        self.date = date
        self.id = id
    }
}
