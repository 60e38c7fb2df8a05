import Foundation

/// Where the server keeps projects and what each sets for all its links: the destination hosts an
/// SDK key may send people to, the pasteboard landing page, the apps of its association files. One
/// of the stores ``ServerStore`` is made of (the SQL engines implement every one); a part of the
/// server that needs only this takes only this.
package protocol ProjectStore: Sendable {
    /// Creates a project.
    func createProject(name: String, at date: Date) async throws -> Project

    /// Every project, oldest first.
    func projects() async throws -> [Project]

    /// Where links made with an SDK key may send people (``DestinationHosts``).
    func destinationHosts(project: String) async throws -> DestinationHosts

    /// Replaces the project's mode and hosts.
    func setDestinationHosts(project: String, _ hosts: DestinationHosts) async throws

    /// Adds `hosts` (exact names) to the project's list when its mode is
    /// ``DestinationHosts/Mode/learned`` (an admin's link or template uses them).
    func learnDestinationHosts(project: String, hosts: [String]) async throws

    /// The hosts every link and template of each project uses, learned once per project (those
    /// stored before the modes existed, ``Migration`` 15, and a project made since, at the next
    /// start); how many projects learned at least one host.
    func learnStoredDestinationHosts() async throws -> Int

    /// The project's pasteboard landing page (off, without a name or icon, for an unknown project).
    func landingPage(project: String) async throws -> LandingPageSettings

    /// Sets the project's pasteboard landing page.
    func setLandingPage(project: String, _ settings: LandingPageSettings) async throws

    /// Registers an app (for the association files).
    func insertApp(_ app: AppRecord) async throws

    /// Every registered app, oldest first.
    func apps() async throws -> [AppRecord]
}

package struct Project: Sendable, Hashable, Codable {
    /// A random identifier (`prj_…`).
    package var id: String
    /// The name it was created with.
    package var name: String
    /// When it was created.
    package var createdAt: Date

    /// A project; see each property.
    package init(id: String, name: String, createdAt: Date) {
        self.id = id
        self.name = name
        self.createdAt = createdAt.storedPrecision
    }
}

package struct LandingPageSettings: Sendable, Hashable, Codable {
    /// Whether links of the project show the page unless they say otherwise. Default off.
    package var enabled: Bool
    /// The app's name on the page (`Get Acme Shop`); the link's title alone when `nil`.
    package var appName: String?
    /// An `https` URL of the app's icon; no icon when `nil`.
    package var appIconURL: String?

    /// Settings; see each property.
    package init(enabled: Bool = false, appName: String? = nil, appIconURL: String? = nil) {
        self.enabled = enabled
        self.appName = appName
        self.appIconURL = appIconURL
    }
}

extension ProjectStore {
    /// Adds the hosts `link` sends people to to its project's learned destination hosts
    /// (``learnDestinationHosts(project:hosts:)``): after an admin's link is made or edited.
    package func learnDestinations(of link: LinkRecord) async throws {
        try await learnDestinationHosts(project: link.projectID, hosts: DestinationHosts.hosts(of: link.destinationURLs))
    }

    /// The same for `template`'s fallbacks, after an admin makes it.
    package func learnDestinations(of template: TemplateRecord) async throws {
        try await learnDestinationHosts(project: template.projectID, hosts: DestinationHosts.hosts(of: template.destinationURLs))
    }
}
