import Foundation
import LinkRelayServerCore
import Mustache

/// The redirect's four pages (`Links/Pages/*.mustache`, a resource of this module): the page that
/// collects what the deferred match compares, the interstitial that tries the app, the
/// pasteboard landing page and the preview crawlers get. Every value is HTML-escaped by the
/// templates (`{{…}}`); the two JavaScript literals are made safe beforehand
/// (``Redirect/script(_:)``) and written as they are (`{{{…}}}`).
package struct RedirectPages: Sendable {
    let library: MustacheLibrary

    /// The pages as shipped, read once per process.
    package static let shipped: Result<RedirectPages, StartupError> = {
        do {
            let folder = try ServerResources.api.url("Pages", withExtension: nil).get()
            var library = MustacheLibrary()
            for name in ["collecting", "interstitial", "landing", "preview"] {
                var text = try String(contentsOf: folder.appendingPathComponent(name + ".mustache"), encoding: .utf8)
                if text.hasSuffix("\n") { text.removeLast() }
                try library.register(text, named: name)
            }
            return .success(RedirectPages(library: library))
        } catch let error as StartupError {
            return .failure(error)
        } catch {
            return .failure(StartupError("The redirect's pages could not be read: \(error)."))
        }
    }()

    /// `template` rendered with `view`.
    /// - Throws: ``APIError`` `503` when the pages are not installed with the server.
    static func render(_ template: String, _ view: some MustacheParent) throws -> String {
        switch shipped {
        case .success(let pages):
            guard let html = pages.library.render(view, withTemplate: template) else {
                throw APIError(.serviceUnavailable, "The redirect's page \(template) is not installed with this server.")
            }
            return html
        case .failure(let error):
            throw APIError(.serviceUnavailable, error.description)
        }
    }
}

/// A page's values, by the names its template uses.
struct PageView: MustacheParent {
    let values: [String: String]

    func child(named name: String) -> Any? { values[name] }
}
