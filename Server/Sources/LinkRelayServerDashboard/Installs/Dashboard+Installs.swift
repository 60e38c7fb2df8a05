import Foundation
import HTTPTypes
import Hummingbird
import LinkRelay
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import NIOCore

extension Dashboard {
    // MARK: Installs

    struct InstallsView {
        let chrome: Chrome
        let rows: [Row]
        let hasRows: Bool
        /// The last 30 days' installs by method, attributed and organic.
        let methods: [Method]
        let attributed: Int
        let organic: Int

        struct Method {
            let method: String
            let installs: Int
        }

        struct Row {
            let when: String
            let method: String
            let confidence: Int
            let why: String
            let link: String?
            let linkID: String?
        }
    }

    func installs(_ context: ServerContext) async throws -> Response {
        let session = try context.requireSession()
        let installs = try await store.installs(project: session.projectID, link: nil, limit: 100)
        let now = clock.currentDate
        let methods = try await store.installSummary(
            project: session.projectID, link: nil, from: now.addingTimeInterval(-30 * 86_400), to: now)
        let organic = methods.filter { $0.name == AttributionMethod.none.rawValue }.reduce(0) { $0 + $1.count }
        var codes: [String: String] = [:]
        for id in Set(installs.compactMap(\.linkID)) { codes[id] = try await store.link(id: id)?.shortCode }
        return pages.page(
            "installs",
            InstallsView(
                chrome: Chrome(title: "Installs", csrf: session.csrfToken, section: "installs"),
                rows: installs.map {
                    InstallsView.Row(
                        when: ServerHTTP.timestamp($0.installedAt), method: Self.methodName($0.method), confidence: $0.confidence,
                        why: $0.method == .none ? "" : Self.whyItMatched($0.matchedFactors), link: $0.linkID.flatMap { codes[$0] },
                        linkID: $0.linkID.flatMap { codes[$0] == nil ? nil : $0 })
                }, hasRows: !installs.isEmpty,
                methods: methods.map {
                    InstallsView.Method(method: Self.methodName(AttributionMethod(rawValue: $0.name ?? "") ?? .none), installs: $0.count)
                },
                attributed: methods.reduce(0) { $0 + $1.count } - organic, organic: organic))
    }
}
