import ArgumentParser
import Foundation
import LinkRelay
import LinkRelayServer
import LinkRelayServerCore
import LinkRelayServerHTTP
import LinkRelayServerStorage

struct Links: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Lists, shows, changes and deactivates links (as the admin API does).",
        subcommands: [List.self, Show.self, Update.self, Deactivate.self])

    /// The project `named`, else the first; a ``StartupError`` when there is none.
    static func project(_ named: String?, in store: any ServerStore) async throws -> String {
        if let named { return named }
        guard let first = try await store.projects().first?.id else {
            throw StartupError("There is no project yet: start the server once on this database (it makes one).")
        }
        return first
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Lists links, newest first, with their clicks (bots not counted).")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The project; default the first.") var project: String?
        @Option(help: "Only links whose code, title or destination contains this (any case).") var search: String?
        @Flag(help: "Only active or only inactive links (default both).") var status: LinkStatus?
        @Option(help: "How many (1…1000).") var limit = 50
        @Flag(name: .long, help: "As JSON: the admin API's rows.") var json = false

        enum LinkStatus: String, EnumerableFlag {
            case active, inactive
        }

        func validate() throws {
            guard (1...1000).contains(limit) else { throw ValidationError("--limit must be from 1 to 1000.") }
        }

        func run() async throws {
            print(
                try await database.withStore { store in
                    let projectID = try await Links.project(project, in: store)
                    let links = try await store.links(
                        project: projectID, filter: LinkFilter(search: search, active: status.map { $0 == .active }), after: nil,
                        limit: limit)
                    let clicks = try await store.clickCounts(links: links.map(\.id))
                    return json ? LinkCommands.json(links, clicks: clicks) : LinkCommands.table(links, clicks: clicks, now: Date())
                })
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Shows one link's fields and clicks.")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The project; default the first.") var project: String?
        @Argument(help: "The link: its code, template/code, or id.") var link: String
        @Flag(name: .long, help: "As JSON: the admin API's row.") var json = false

        func run() async throws {
            print(
                try await database.withStore { store in
                    let found = try await LinkCommands.require(link, project: try await Links.project(project, in: store), in: store)
                    let clicks = try await store.clickCounts(links: [found.id])[found.id] ?? 0
                    return json ? LinkCommands.json(found, clicks: clicks) : LinkCommands.details(found, clicks: clicks, now: Date())
                })
        }
    }

    struct Update: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Changes a link's fields, each checked as the admin API checks it.",
            discussion:
                "A server on PostgreSQL serves the change within a second; one on the same SQLite file within its --link-cache-seconds (60 by default)."
        )
        @OptionGroup var database: DatabaseOption
        @Option(help: "The project; default the first.") var project: String?
        @Argument(help: "The link: its code, template/code, or id.") var link: String
        @Option(help: "The title (empty to clear it).") var title: String?
        @Option(name: .customLong("original-url"), help: "Where a browser goes.") var originalURL: String?
        @Option(name: .customLong("web-fallback-url"), help: "Where a device without the app goes (empty to clear it).") var webFallbackURL:
            String?
        @Option(name: .customLong("expires-at"), help: "When it stops answering (ISO 8601), or 'never'.") var expiresAt: String?
        @Option(
            name: .customLong("fields"), help: "Any other fields as the admin API's JSON object, such as '{\"deepLinkPath\": \"/sale\"}'.")
        var fields: String?

        func run() async throws {
            var changes: [String: JSONValue] = [:]
            if let fields {
                guard let object = LinkCommands.fields(fromJSON: fields) else { throw ValidationError("--fields must be a JSON object.") }
                changes = object
            }
            if let title { changes["title"] = title.isEmpty ? .null : .string(title) }
            if let originalURL { changes["originalUrl"] = .string(originalURL) }
            if let webFallbackURL { changes["webFallbackUrl"] = webFallbackURL.isEmpty ? .null : .string(webFallbackURL) }
            if let expiresAt { changes["expiresAt"] = expiresAt == "never" ? .null : .string(expiresAt) }
            guard !changes.isEmpty else { throw ValidationError("Name at least one field to change.") }
            let changed = changes
            print(
                try await database.withStore { store in
                    let found = try await LinkCommands.require(link, project: try await Links.project(project, in: store), in: store)
                    let updated = try await LinkCommands.update(found, fields: changed, in: store)
                    return "Updated \(updated.shortCode):\n"
                        + LinkCommands.details(
                            updated, clicks: try await store.clickCounts(links: [updated.id])[updated.id] ?? 0, now: Date())
                })
        }
    }

    struct Deactivate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Deactivates a link: its code answers 404 (and `links update CODE --fields '{\"isActive\": true}'` brings it back).")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The project; default the first.") var project: String?
        @Argument(help: "The link: its code, template/code, or id.") var link: String

        func run() async throws {
            print(
                try await database.withStore { store in
                    let found = try await LinkCommands.require(link, project: try await Links.project(project, in: store), in: store)
                    let updated = try await LinkCommands.update(found, fields: ["isActive": false], in: store)
                    return "Deactivated \(updated.shortCode)."
                })
        }
    }
}
