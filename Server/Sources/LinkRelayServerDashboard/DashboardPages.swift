import Foundation
import HTTPTypes
import Hummingbird
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage
import Mustache
import NIOCore

/// The dashboard's templates (`Dashboard/Templates/*.mustache`, HTML-escaped unless a template
/// says otherwise) and static files, read once from the server's resources.
struct DashboardPages: Sendable {
    let library: MustacheLibrary
    let stylesheet: String
    let script: String

    /// The templates and files as shipped, read once per process.
    static let shipped: Result<DashboardPages, StartupError> = {
        do {
            return .success(try load())
        } catch let error as StartupError {
            return .failure(error)
        } catch {
            return .failure(StartupError("The dashboard's files could not be read: \(error)."))
        }
    }()

    /// The templates and files as shipped with the server.
    /// - Throws: ``StartupError`` naming what is missing or does not parse.
    static func load() throws -> DashboardPages {
        let folder = try ServerResources.dashboard.folder.get().bundleURL
        let statics = try ServerResources.dashboard.url("Static", withExtension: nil).get()
        var library = MustacheLibrary()
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names.sorted() where name.hasSuffix(".mustache") {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            do {
                try library.register(text, named: String(name.dropLast(".mustache".count)))
            } catch {
                throw StartupError("The dashboard's template \(name) does not parse: \(error).")
            }
        }
        for page in Self.templates where library.getTemplate(named: page) == nil {
            throw StartupError("The dashboard's template \(page).mustache is not installed at \(folder.path).")
        }
        return DashboardPages(
            library: library, stylesheet: try String(contentsOf: statics.appendingPathComponent("style.css"), encoding: .utf8),
            script: try String(contentsOf: statics.appendingPathComponent("app.js"), encoding: .utf8))
    }

    /// Every template the pages render, each in its page's folder (`Links/links.mustache`).
    static let templates = [
        "head", "foot", "error", "sign_in", "overview", "links", "link", "link_form", "installs", "events", "apps", "keys",
    ]

    /// `template` rendered with `view` as an HTML page.
    func page(_ template: String, _ view: Any, status: HTTPResponse.Status = .ok) -> Response {
        let html = library.render(view, withTemplate: template) ?? "<!doctype html><title>Missing page</title><p>No template \(template)."
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// An error as a page.
    func error(_ error: DashboardError) -> Response {
        page(
            "error",
            ErrorView(
                chrome: Chrome(title: "Problem", csrf: nil), heading: error.status == .notFound ? "Not found" : "Something is wrong",
                message: error.message),
            status: error.status)
    }

    struct ErrorView {
        let chrome: Chrome
        let heading: String
        let message: String
    }
}

/// What every page's header shows: its title, and, signed in, the navigation and the sign-out
/// form with the session's token.
struct Chrome {
    let title: String
    let signedIn: Bool
    let csrf: String
    let overview: Bool
    let links: Bool
    let installs: Bool
    let events: Bool
    let keys: Bool
    let apps: Bool

    /// A page's chrome; signed in when a form token is given. `section` marks the current
    /// navigation entry.
    init(title: String, csrf: String?, section: String = "") {
        self.title = title
        signedIn = csrf != nil
        self.csrf = csrf ?? ""
        overview = section == "overview"
        links = section == "links"
        installs = section == "installs"
        events = section == "events"
        keys = section == "keys"
        apps = section == "apps"
    }
}
