import Foundation

/// Where the server keeps what the admin API's analytics and the dashboard's pages add up: click
/// and install summaries, daily counts, events by day, row counts. One of the stores
/// ``ServerStore`` is made of (the SQL engines implement every one); a part of the server that
/// needs only this takes only this.
package protocol AnalyticsStore: Sendable {
    /// How many clicks each of `links` has had, bots left out: the daily counts' sum, so clicks
    /// the retention deleted still count (one read for all of them).
    func clickCounts(links: [String]) async throws -> [String: Int]

    /// What `project`'s clicks (`link`'s only, when given) from `from` up to and including `to` add up to.
    func clickSummary(project: String, link: String?, from: Date, to: Date) async throws -> ClickSummary

    /// `project`'s installs (those attributed to `link`, when given) from `from` up to `to`, by
    /// method (`none` for organic), `to` included.
    func installSummary(project: String, link: String?, from: Date, to: Date) async throws -> [NamedCount]

    /// `project`'s events from `from` up to and including `to` (their own times), by name, UTC
    /// day and revenue currency, newest day first.
    func eventSummary(project: String, from: Date, to: Date) async throws -> [EventDay]

    /// What `project`'s clicks (`link`'s only, when given) add up to over the UTC days
    /// `fromDay`…`toDay` (days since 1970), from the daily counts kept as clicks are written.
    func dailyClicks(project: String, link: String?, fromDay: Int, toDay: Int) async throws -> DailyClicks

    /// How many rows each table holds.
    func counts() async throws -> StoreCounts
}

package struct NamedCount: Sendable, Hashable {
    /// The value; `nil` where unknown.
    package var name: String?
    package var count: Int

    /// A value; see each property.
    package init(name: String?, count: Int) {
        self.name = name
        self.count = count
    }
}

package struct LinkClicks: Sendable, Hashable {
    package var linkID: String
    package var clicks: Int
    package var uniqueClicks: Int

    /// A value; see each property.
    package init(linkID: String, clicks: Int, uniqueClicks: Int) {
        self.linkID = linkID
        self.clicks = clicks
        self.uniqueClicks = uniqueClicks
    }
}

package struct ClickSummary: Sendable, Hashable {
    /// The clicks.
    package var total: Int
    /// The addresses they came from (a click without one counts alone).
    package var unique: Int
    /// Clicks per UTC day (days since 1970), oldest first; days without clicks left out.
    package var byDay: [(day: Int, clicks: Int)]
    /// By platform (`ios`, `android`, `web`), by country, by referring host, by `utm_source`:
    /// the most frequent first, at most ``ClickSummary/topValues`` each.
    package var byPlatform: [NamedCount]
    package var byCountry: [NamedCount]
    package var byReferrer: [NamedCount]
    package var byUTMSource: [NamedCount]
    /// For a project: its most tapped links, at most 10.
    package var topLinks: [LinkClicks]

    /// A value; see each property.
    package init(
        total: Int, unique: Int, byDay: [(day: Int, clicks: Int)], byPlatform: [NamedCount], byCountry: [NamedCount],
        byReferrer: [NamedCount], byUTMSource: [NamedCount], topLinks: [LinkClicks]
    ) {
        self.total = total
        self.unique = unique
        self.byDay = byDay
        self.byPlatform = byPlatform
        self.byCountry = byCountry
        self.byReferrer = byReferrer
        self.byUTMSource = byUTMSource
        self.topLinks = topLinks
    }

    /// How many values a breakdown lists.
    package static let topValues = 20

    package static func == (a: Self, b: Self) -> Bool {
        a.total == b.total && a.unique == b.unique && a.byDay.map(\.day) == b.byDay.map(\.day)
            && a.byDay.map(\.clicks) == b.byDay.map(\.clicks)
            && a.byPlatform == b.byPlatform && a.byCountry == b.byCountry && a.byReferrer == b.byReferrer && a.byUTMSource == b.byUTMSource
            && a.topLinks == b.topLinks
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(total)
        hasher.combine(unique)
    }
}

package struct EventDay: Sendable, Hashable {
    package var name: String
    /// Days since 1970 (UTC).
    package var day: Int
    /// The events' `currency` (`nil` for events without revenue).
    package var currency: String?
    package var count: Int
    /// The sum of their numeric `revenue` property (to a thousandth).
    package var revenue: Decimal

    /// A value; see each property.
    package init(name: String, day: Int, currency: String?, count: Int, revenue: Decimal) {
        self.name = name
        self.day = day
        self.currency = currency
        self.count = count
        self.revenue = revenue
    }
}

package struct DailyClicks: Sendable, Hashable {
    package var total: Int
    /// Clicks per day (days since 1970), oldest first; days without clicks left out.
    package var byDay: [NamedCount]
    package var byPlatform: [NamedCount]
    package var byCountry: [NamedCount]
    package var byReferrer: [NamedCount]
    package var byUTMSource: [NamedCount]
    /// For a project: its most tapped links (their ids), at most 10.
    package var topLinks: [NamedCount]

    /// A value; see each property.
    package init(
        total: Int, byDay: [NamedCount], byPlatform: [NamedCount], byCountry: [NamedCount], byReferrer: [NamedCount],
        byUTMSource: [NamedCount], topLinks: [NamedCount]
    ) {
        self.total = total
        self.byDay = byDay
        self.byPlatform = byPlatform
        self.byCountry = byCountry
        self.byReferrer = byReferrer
        self.byUTMSource = byUTMSource
        self.topLinks = topLinks
    }
}

package struct StoreCounts: Sendable, Hashable, Codable {
    package var projects: Int
    package var links: Int
    package var clicks: Int
    package var installs: Int
    package var events: Int

    /// Counts; see each property.
    package init(projects: Int, links: Int, clicks: Int, installs: Int, events: Int) {
        self.projects = projects
        self.links = links
        self.clicks = clicks
        self.installs = installs
        self.events = events
    }
}
