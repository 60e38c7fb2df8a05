import Foundation
import HTTPTypes
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import NIOCore

extension Dashboard {
    // MARK: Overview

    struct OverviewView {
        let chrome: Chrome
        let links: Int
        let clicksToday: Int
        let clicksWeek: Int
        let clicksMonth: Int
        let attributed: Int
        let organic: Int
        let top: [TopLink]
        let hasTop: Bool
        /// SDK-key links may go to any host (``DestinationHosts/Mode/any``): said on the overview.
        let anyHost: Bool
    }

    struct TopLink {
        let id: String
        let label: String
        let clicks: Int
    }

    /// The UTC day of `date`, counted from 1970.
    static func day(of date: Date) -> Int {
        Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
    }

    func overview(_ context: ServerContext) async throws -> Response {
        let session = try context.requireSession()
        let now = clock.currentDate
        let project = session.projectID
        // Whole UTC days, from the daily counts: today, the last 7 and the last 30.
        let today = Self.day(of: now)
        let month = try await store.dailyClicks(project: project, link: nil, fromDay: today - 29, toDay: today)
        func clicks(since day: Int) -> Int { month.byDay.filter { (Int($0.name ?? "") ?? .min) >= day }.reduce(0) { $0 + $1.count } }
        let installs = try await store.installSummary(project: project, link: nil, from: now.addingTimeInterval(-30 * 86_400), to: now)
        let organic = installs.filter { $0.name == AttributionMethod.none.rawValue }.reduce(0) { $0 + $1.count }
        var top: [TopLink] = []
        for entry in month.topLinks {
            guard let id = entry.name else { continue }
            let link = try await store.link(id: id)
            top.append(TopLink(id: id, label: link.map(Self.label) ?? id, clicks: entry.count))
        }
        return pages.page(
            "overview",
            OverviewView(
                chrome: Chrome(title: "Overview", csrf: session.csrfToken, section: "overview"),
                links: try await store.linkCount(project: project),
                clicksToday: clicks(since: today), clicksWeek: clicks(since: today - 6), clicksMonth: month.total,
                attributed: installs.reduce(0) { $0 + $1.count } - organic, organic: organic, top: top, hasTop: !top.isEmpty,
                anyHost: try await store.destinationHosts(project: project).mode == .any))
    }
}

/// Clicks per day as an SVG bar chart the server draws: no script, no library.
enum ClickChart {
    /// `days` bars ending with the day of `now` (UTC), each with its date and count as a title;
    /// the highest count and the first and last dates as labels.
    static func svg(_ byDay: [(day: Int, clicks: Int)], endingAt now: Date, days: Int) -> String {
        let last = Int((now.timeIntervalSince1970 / 86_400).rounded(.down))
        let counts = Dictionary(byDay.map { ($0.day, $0.clicks) }, uniquingKeysWith: +)
        let series = (0..<days).map { offset in (day: last - days + 1 + offset, clicks: counts[last - days + 1 + offset] ?? 0) }
        let highest = max(series.map(\.clicks).max() ?? 0, 1)
        let (width, height, left, bottom) = (days * 20 + 40, 180, 36, 24)
        let barWidth = 14
        var bars = ""
        for (index, point) in series.enumerated() {
            let barHeight =
                point.clicks == 0 ? 0 : max(Int((Double(point.clicks) / Double(highest) * Double(height - bottom - 10)).rounded()), 1)
            let x = left + index * 20 + 3
            let y = height - bottom - barHeight
            let date = Timestamp.date(ofDay: point.day)
            bars +=
                "<rect class=\"bar\" x=\"\(x)\" y=\"\(y)\" width=\"\(barWidth)\" height=\"\(barHeight)\" fill=\"#0b57d0\" data-date=\"\(date)\" data-clicks=\"\(point.clicks)\"><title>\(date): \(point.clicks) clicks</title></rect>"
        }
        let first = Timestamp.date(ofDay: series.first?.day ?? last)
        let end = Timestamp.date(ofDay: last)
        return """
            <svg class="chart" role="img" aria-label="Clicks per day from \(first) to \(end); the most in a day: \(highest)" viewBox="0 0 \(width) \(height)" xmlns="http://www.w3.org/2000/svg">\
            <line x1="\(left)" y1="\(height - bottom)" x2="\(width - 4)" y2="\(height - bottom)" stroke="#57606a"/>\
            <text x="\(left - 6)" y="14" text-anchor="end" font-size="11" fill="#57606a">\(highest)</text>\
            <text x="\(left - 6)" y="\(height - bottom)" text-anchor="end" font-size="11" fill="#57606a">0</text>\
            \(bars)\
            <text x="\(left)" y="\(height - 6)" font-size="11" fill="#57606a">\(first)</text>\
            <text x="\(width - 4)" y="\(height - 6)" text-anchor="end" font-size="11" fill="#57606a">\(end)</text></svg>
            """
    }
}
