import Foundation
import LinkRelay
import LinkRelayTesting
import Testing

@testable import LinkRelayServerCore

/// Making links from drafts (``LinkMaker``) over in-memory stores: what an SDK key may set and
/// where it may send people, templates, the same link for a repeated request, codes.
@Suite("Making links")
struct LinkMakerTests {
    let store = MemoryLinkStore()
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    var maker: LinkMaker { LinkMaker(store: store, clock: ManualClock(date: now)) }

    func keys() async throws -> (sdk: APIKeyRecord, admin: APIKeyRecord) {
        let project = try await store.createProject(name: "acme", at: now)
        return (
            APIKeys.issue(project: project.id, scope: .sdk, name: "app", at: now).record,
            APIKeys.issue(project: project.id, scope: .admin, name: "ops", at: now).record
        )
    }

    func draft(_ edit: (inout LinkDraft) -> Void) -> LinkDraft {
        var draft = LinkDraft()
        edit(&draft)
        return draft
    }

    func error(_ body: () async throws -> Void) async -> LinkCreationError? {
        do {
            try await body()
            return nil
        } catch {
            return error as? LinkCreationError
        }
    }

    @Test("an SDK key may not set an admin's field, and may send people only to the hosts the admin's links use")
    func sdkKey() async throws {
        let (sdk, admin) = try await keys()
        #expect(
            await error { _ = try await maker.make(draft { $0.appScheme = "acme" }, key: sdk, admin: false) }
                == .adminOnly(field: "appScheme"))
        #expect(
            await error { _ = try await maker.make(draft { $0.originalURL = "https://evil.example/" }, key: sdk, admin: false) }
                == .destinationNotAllowed(field: "originalUrl"))
        // An admin's link teaches the project its host; the SDK key may then use it.
        _ = try await maker.make(draft { $0.originalURL = "https://acme.example/home" }, key: admin, admin: true)
        let (link, repeated) = try await maker.make(
            draft {
                $0.webFallbackURL = "https://acme.example/p/1"; $0.deepLinkPath = "/p/1"
            }, key: sdk, admin: false)
        #expect(!repeated)
        #expect(link.originalURL == "https://acme.example/p/1", "the web fallback stands in for a missing original URL")
        #expect(try await store.destinationHosts(project: sdk.projectID).hosts == ["acme.example"], "an SDK key's link teaches nothing")
        #expect(LinkMaker.warnings(link).count == 1, "a path without a scheme reaches the app only by a deferred install")
    }

    @Test("the same user's repeated request gets its link back; another destination is another link")
    func deduplicates() async throws {
        let (_, admin) = try await keys()
        let request = draft {
            $0.externalUserID = "user-1"; $0.originalURL = "https://acme.example/a"; $0.title = "A"
        }
        let (first, firstRepeated) = try await maker.make(request, key: admin, admin: true)
        let (second, secondRepeated) = try await maker.make(request, key: admin, admin: true)
        #expect(!firstRepeated && secondRepeated && second == first)
        var other = request
        other.originalURL = "https://acme.example/b"
        let (third, thirdRepeated) = try await maker.make(other, key: admin, admin: true)
        #expect(!thirdRepeated && third.id != first.id)
        #expect(store.links.count == 2)
    }

    @Test("templates by id, slug or both; a taken own code is refused; random codes are tried ten times")
    func templatesAndCodes() async throws {
        let (_, admin) = try await keys()
        let template = TemplateRecord(
            projectID: admin.projectID, slug: "shop", name: "Shop", iosAppStoreURL: "https://apps.apple.com/app/id1", createdAt: now)
        try await store.insertTemplate(template)
        let (link, _) = try await maker.make(
            draft {
                $0.templateSlug = "shop"; $0.customCode = "spring"
            }, key: admin, admin: true)
        #expect(link.templateID == template.id && link.iosAppStoreURL == "https://apps.apple.com/app/id1")
        #expect(
            await error {
                _ = try await maker.make(
                    draft {
                        $0.templateID = template.id; $0.templateSlug = "other"
                    }, key: admin, admin: true)
            }
                == .noTemplate(field: "templateSlug", message: "templateId and templateSlug name no one template of this project."))
        #expect(
            await error {
                _ = try await maker.make(
                    draft {
                        $0.templateSlug = "shop"; $0.customCode = "spring"
                    }, key: admin, admin: true)
            }
                == .codeTaken("spring"))
        store.failInserts(9)
        _ = try await maker.make(draft { $0.originalURL = "https://acme.example/" }, key: admin, admin: true)
        store.failInserts(10)
        #expect(
            await error { _ = try await maker.make(draft { $0.originalURL = "https://acme.example/" }, key: admin, admin: true) }
                == .noFreeCode)
    }

    @Test("a broken rule is answered before anything is read or stored")
    func rulesFirst() async throws {
        let (_, admin) = try await keys()
        #expect(
            await error {
                _ = try await maker.make(
                    draft {
                        $0.customCode = "api"; $0.templateSlug = "none"
                    }, key: admin, admin: true)
            }
                == .field(LinkFieldError("customCode", "must be 1 to 20 characters of A-Z a-z 0-9 _ - and not a reserved word")))
        #expect(
            await error { _ = try await maker.make(draft { $0.attributionWindowHours = 0 }, key: admin, admin: true) }?.message
                == "attributionWindowHours must be between 1 and 2160.")
        #expect(store.links.isEmpty)
        let copy = try await LinkMaker.duplicate(
            try await maker.make(draft { $0.title = String(repeating: "x", count: 512) }, key: admin, admin: true).0, at: now, into: store)
        #expect(copy.title?.count == 512 && copy.dedupeKey == nil, "a copy's title keeps within its limit")
    }
}
