import Foundation
import Hummingbird
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage

/// The dashboard's events: counts and revenue by name and by day.
extension Dashboard {
    struct EventsView {
        let chrome: Chrome
        let days: Int
        let byName: [Row]
        let byDay: [Row]
        let hasRows: Bool

        struct Row {
            let day: String
            let name: String
            let count: Int
            let revenue: String
        }
    }

    func events(_ request: Request, _ context: ServerContext) async throws -> Response {
        let session = try context.requireSession()
        let days = 30
        let now = clock.currentDate
        let summary = try await store.eventSummary(
            project: session.projectID, from: now.addingTimeInterval(-Double(days) * 86_400), to: now)
        var names: [String: (count: Int, revenue: [String: Decimal])] = [:]
        var daily: [String: (day: Int, name: String, count: Int, revenue: [String: Decimal])] = [:]
        for entry in summary {
            names[entry.name, default: (0, [:])].count += entry.count
            let key = "\(entry.day) \(entry.name)"
            daily[key, default: (entry.day, entry.name, 0, [:])].count += entry.count
            if let currency = entry.currency {
                names[entry.name]?.revenue[currency, default: 0] += entry.revenue
                daily[key]?.revenue[currency, default: 0] += entry.revenue
            }
        }
        return pages.page(
            "events",
            EventsView(
                chrome: Chrome(title: "Events", csrf: session.csrfToken, section: "events"), days: days,
                byName: names.sorted { ($0.value.count, $1.key) > ($1.value.count, $0.key) }.map {
                    EventsView.Row(day: "", name: $0.key, count: $0.value.count, revenue: Self.amounts($0.value.revenue))
                },
                byDay: daily.values.sorted { ($0.day, $1.name) > ($1.day, $0.name) }.map {
                    EventsView.Row(day: Timestamp.date(ofDay: $0.day), name: $0.name, count: $0.count, revenue: Self.amounts($0.revenue))
                }, hasRows: !summary.isEmpty))
    }

    /// `29.99 EUR, 5.00 USD`; empty without revenue.
    static func amounts(_ revenue: [String: Decimal]) -> String {
        revenue.sorted { $0.key < $1.key }.map { "\($0.value.formatted(.number.precision(.fractionLength(2)).grouping(.never))) \($0.key)" }
            .joined(separator: ", ")
    }
}
