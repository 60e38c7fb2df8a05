import Foundation
import Hummingbird
import LinkRelay
import LinkRelayDoctor
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage

/// The dashboard's apps: the association files the server serves, and `linkrelay doctor`'s
/// verdict on them (``AssociationFile``'s checks, as the command runs them on a domain).
extension Dashboard {
    struct AppsView {
        let chrome: Chrome
        let sampleURL: String
        let ios: [IOSApp]
        let hasIOS: Bool
        let clips: [String]
        let hasClips: Bool
        let findings: [Finding]
        let hasFindings: Bool
        let aasa: String
        let android: [AndroidApp]
        let hasAndroid: Bool
        let assetLinks: String

        struct IOSApp {
            let identifier: String
            let paths: String
            let wellFormed: String
            let verdict: String
        }

        struct Finding {
            let status: String
            let message: String
            let fix: String
        }

        struct AndroidApp {
            let identifier: String
            let fingerprints: String
        }
    }

    func apps(_ request: Request, _ context: ServerContext) async throws -> Response {
        let session = try context.requireSession()
        let registered = try await store.apps()
        let aasaText = JSONText.pretty(AppAssociations.apple(registered))
        // A link of this project as it is shared, to ask the file about.
        let newest = try await store.links(project: session.projectID, filter: LinkFilter(), after: nil, limit: 1).first
        let sample =
            newest.map { $0.shareURL(on: configuration.shareOrigin(for: request)) }
            ?? configuration.shareOrigin(for: request).appendingPathComponent("example")
        var findings: [AppsView.Finding] = []
        var file: AssociationFile?
        do {
            file = try AssociationFile(data: Data(aasaText.utf8))
            findings = file?.findings.map { AppsView.Finding(status: "\($0.status)", message: $0.message, fix: $0.fix) } ?? []
        } catch {
            findings = [AppsView.Finding(status: "failure", message: "The file cannot be read: \(error).", fix: "")]
        }
        let ios = registered.filter { $0.platform == .ios }.map { app in
            let verdict: String =
                switch file?.verdict(for: sample, appID: app.identifier) {
                case .opensApp(let rule)?: "opens the app (by \(rule))"
                case .excluded(let rule)?: "stays in Safari: excluded by \(rule)"
                case .noMatch?: "stays in Safari: no path matches"
                case .appNotListed?, nil: "stays in Safari: the app is not listed"
                }
            return AppsView.IOSApp(
                identifier: app.identifier, paths: app.paths.joined(separator: " "),
                wellFormed: AssociationFile.isWellFormed(appID: app.identifier)
                    ? "yes" : "no: an app ID is TEAMID.bundle.id, ten characters first",
                verdict: verdict)
        }
        let clips = registered.filter { $0.platform == .appClip }.map(\.identifier)
        let android = registered.filter { $0.platform == .android }.map {
            AppsView.AndroidApp(identifier: $0.identifier, fingerprints: $0.certificateFingerprints.joined(separator: " "))
        }
        return pages.page(
            "apps",
            AppsView(
                chrome: Chrome(title: "Apps", csrf: session.csrfToken, section: "apps"), sampleURL: sample.absoluteString, ios: ios,
                hasIOS: !ios.isEmpty, clips: clips, hasClips: !clips.isEmpty, findings: findings, hasFindings: !findings.isEmpty,
                aasa: aasaText,
                android: android, hasAndroid: !android.isEmpty, assetLinks: JSONText.pretty(.array(AppAssociations.android(registered)))))
    }
}
