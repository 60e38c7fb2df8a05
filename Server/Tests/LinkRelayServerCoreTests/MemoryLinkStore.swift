import Foundation
import Synchronization

@testable import LinkRelayServerCore

/// ``LinkStore`` and ``ProjectStore`` in memory, for the Core's tests: what the SQL stores do,
/// without a database (a link's code is unique per template; a template's slug per project; a
/// learned host list grows as ``DestinationHosts/adding(_:to:)`` says). Link inserts can be made
/// to meet a taken code a number of times.
final class MemoryLinkStore: LinkStore, ProjectStore {
    private struct State {
        var projects: [Project] = []
        var hosts: [String: DestinationHosts] = [:]
        var landingPages: [String: LandingPageSettings] = [:]
        var apps: [AppRecord] = []
        var templates: [TemplateRecord] = []
        var links: [LinkRecord] = []
        var conflicts = 0
    }

    private let state = Mutex(State())

    /// The next `count` link inserts fail as a taken code would.
    func failInserts(_ count: Int) { state.withLock { $0.conflicts = count } }
    var links: [LinkRecord] { state.withLock { $0.links } }

    // MARK: ProjectStore

    func createProject(name: String, at date: Date) async throws -> Project {
        let project = Project(id: "prj_" + UUID().uuidString.prefix(8), name: name, createdAt: date)
        state.withLock {
            $0.projects.append(project)
            $0.hosts[project.id] = DestinationHosts(mode: .learned, hosts: [])
        }
        return project
    }

    func projects() async throws -> [Project] { state.withLock { $0.projects } }

    func destinationHosts(project: String) async throws -> DestinationHosts {
        state.withLock { $0.hosts[project] ?? DestinationHosts(mode: .learned, hosts: []) }
    }

    func setDestinationHosts(project: String, _ hosts: DestinationHosts) async throws { state.withLock { $0.hosts[project] = hosts } }

    func learnDestinationHosts(project: String, hosts: [String]) async throws {
        state.withLock { state in
            guard let known = state.hosts[project], known.mode == .learned else { return }
            state.hosts[project]?.hosts = DestinationHosts.adding(hosts, to: known.hosts)
        }
    }

    func learnStoredDestinationHosts() async throws -> Int { 0 }

    func landingPage(project: String) async throws -> LandingPageSettings {
        state.withLock { $0.landingPages[project] ?? LandingPageSettings() }
    }

    func setLandingPage(project: String, _ settings: LandingPageSettings) async throws {
        state.withLock { $0.landingPages[project] = settings }
    }

    func insertApp(_ app: AppRecord) async throws { state.withLock { $0.apps.append(app) } }
    func apps() async throws -> [AppRecord] { state.withLock { $0.apps } }

    // MARK: LinkStore

    func insertTemplate(_ template: TemplateRecord) async throws {
        try state.withLock { state in
            guard !state.templates.contains(where: { $0.projectID == template.projectID && $0.slug == template.slug }) else {
                throw StoreError(.conflict, "The slug is taken.")
            }
            state.templates.append(template)
        }
    }

    func template(project: String, id: String) async throws -> TemplateRecord? {
        state.withLock { $0.templates.first { $0.projectID == project && $0.id == id } }
    }

    func template(project: String, slug: String) async throws -> TemplateRecord? {
        state.withLock { $0.templates.first { $0.projectID == project && $0.slug == slug } }
    }

    func insertLink(_ link: LinkRecord) async throws {
        try state.withLock { state in
            if state.conflicts > 0 {
                state.conflicts -= 1
                throw StoreError(.conflict, "The code is taken.")
            }
            guard !state.links.contains(where: { $0.templateSlug == link.templateSlug && $0.shortCode == link.shortCode }) else {
                throw StoreError(.conflict, "The code is taken.")
            }
            state.links.append(link)
        }
    }

    func updateLink(_ link: LinkRecord) async throws -> Bool {
        state.withLock { state in
            guard let index = state.links.firstIndex(where: { $0.id == link.id && $0.projectID == link.projectID }) else { return false }
            state.links[index] = link
            return true
        }
    }

    func link(project: String?, shortCode: String, templateSlug: String?) async throws -> LinkRecord? {
        state.withLock { state in
            state.links.first {
                $0.shortCode == shortCode && $0.templateSlug == (templateSlug ?? "") && (project == nil || $0.projectID == project)
            }
        }
    }

    func link(project: String, dedupeKey: String) async throws -> LinkRecord? {
        state.withLock { $0.links.first { $0.projectID == project && $0.dedupeKey == dedupeKey } }
    }

    func link(id: String) async throws -> LinkRecord? { state.withLock { $0.links.first { $0.id == id } } }

    func links(project: String, filter: LinkFilter, after cursor: LinkCursor?, limit: Int) async throws -> [LinkRecord] {
        state.withLock { state in
            Array(
                state.links.filter { $0.projectID == project && (filter.active == nil || $0.isActive == filter.active) }
                    .sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }.prefix(max(0, min(limit, 1000))))
        }
    }

    func deleteLink(project: String, id: String) async throws -> Bool {
        state.withLock { state in
            let before = state.links.count
            state.links.removeAll { $0.projectID == project && $0.id == id }
            return state.links.count < before
        }
    }

    func linkCount(project: String) async throws -> Int { state.withLock { $0.links.filter { $0.projectID == project }.count } }
}
