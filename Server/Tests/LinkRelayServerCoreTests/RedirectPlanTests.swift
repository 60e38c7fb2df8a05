import Foundation
import LinkRelay
import Testing

@testable import LinkRelayServerCore

/// The redirect's decision as values (``RedirectPlan``): no request, no response, no database.
@Suite("The redirect's plan")
struct RedirectPlanTests {
    static func link(_ change: (inout LinkRecord) -> Void = { _ in }) -> LinkRecord {
        var link = LinkRecord(
            projectID: "p", shortCode: "spring", originalURL: "https://acme.example/spring",
            iosAppStoreURL: "https://apps.apple.com/app/id1", androidAppStoreURL: "https://play.google.com/store/apps/details?id=a",
            webFallbackURL: "https://acme.example/web", utmParameters: ["source": "mail"], createdAt: Date(timeIntervalSince1970: 0))
        change(&link)
        return link
    }

    @Test("a crawler gets the preview whatever the rules; a device left out is not found; a phone not yet collected, the collecting page")
    func first() {
        let excluding = Self.link { $0.targetingRules = ["devices": ["android"]] }
        #expect(RedirectPlan.first(excluding, RedirectTap(platform: .web, isBot: true)) == .preview)
        #expect(RedirectPlan.first(excluding, RedirectTap(platform: .ios)) == .notFound)
        #expect(RedirectPlan.first(excluding, RedirectTap(platform: .android, collected: false)) == .collect)
        #expect(RedirectPlan.first(excluding, RedirectTap(platform: .android)) == .click)
        let desktop = RedirectTap(platform: .web, collected: false)
        #expect(RedirectPlan.first(Self.link(), desktop) == .click, "a desktop browser is not collected")
        let french = Self.link { $0.targetingRules = ["languages": ["fr-FR"], "countries": ["FR"]] }
        #expect(RedirectPlan.first(french, RedirectTap(platform: .ios, language: "fr", country: "fr")) == .click)
        #expect(RedirectPlan.first(french, RedirectTap(platform: .ios, language: nil)) == .notFound, "no language where one is asked")
        #expect(RedirectPlan.first(french, RedirectTap(platform: .ios, language: "fr", country: nil)) == .click, "no country named: taken")
        #expect(RedirectPlan.first(french, RedirectTap(platform: .ios, language: "fr", country: "de")) == .notFound)
    }

    @Test("the landing page: an iPhone on its way to the store, its click recorded, a browser that copies, turned on by link or project")
    func landingPage() {
        let iPhone = RedirectTap(platform: .ios)
        let store = RedirectPlan.Destination.landingPage(store: "https://apps.apple.com/app/id1")
        #expect(RedirectPlan.mayShowLandingPage(Self.link(), iPhone, recorded: true))
        #expect(RedirectPlan.destination(Self.link(), iPhone, clickID: "c", recorded: true, projectLandingPage: true) == store)
        #expect(RedirectPlan.destination(Self.link(), iPhone, clickID: "c", recorded: true, projectLandingPage: false) != store)
        let turnedOn = Self.link { $0.landingPage = true }
        #expect(RedirectPlan.destination(turnedOn, iPhone, clickID: "c", recorded: true, projectLandingPage: false) == store)
        for (link, tap, recorded) in [
            (Self.link { $0.landingPage = false }, iPhone, true), (Self.link(), RedirectTap(platform: .ios, scriptless: true), true),
            (Self.link(), iPhone, false), (Self.link { $0.iosUniversalLink = "https://app.acme.example/p" }, iPhone, true),
            (Self.link(), RedirectTap(platform: .android), true),
        ] {
            #expect(!RedirectPlan.mayShowLandingPage(link, tap, recorded: recorded))
            #expect(RedirectPlan.destination(link, tap, clickID: "c", recorded: recorded, projectLandingPage: true) != store)
        }
    }

    @Test("a store page goes as it is; the web gets utm_* and lf_click; a scheme with a path tries the app first; else the preview")
    func destinations() {
        let iPhone = RedirectTap(platform: .ios)
        #expect(
            RedirectPlan.destination(Self.link(), iPhone, clickID: "c", recorded: true, projectLandingPage: false)
                == .redirect("https://apps.apple.com/app/id1"))
        let clicked = Self.link { $0.appendClickID = true }
        #expect(
            RedirectPlan.destination(clicked, RedirectTap(platform: .web), clickID: "c1", recorded: true, projectLandingPage: nil)
                == .redirect("https://acme.example/web?utm_source=mail&lf_click=c1"))
        let app = Self.link {
            $0.appScheme = "acme"
            $0.deepLinkPath = "/p/42"
        }
        #expect(
            RedirectPlan.destination(app, RedirectTap(platform: .android), clickID: "c", recorded: true, projectLandingPage: nil)
                == .interstitial(scheme: "acme://p/42", fallback: "https://play.google.com/store/apps/details?id=a"))
        #expect(
            RedirectPlan.destination(
                app, RedirectTap(platform: .ios, inAppBrowser: true), clickID: "c", recorded: true, projectLandingPage: false)
                == .interstitial(scheme: "acme://p/42", fallback: "https://acme.example/web?utm_source=mail"))
        let empty = LinkRecord(projectID: "p", shortCode: "e", originalURL: "", createdAt: Date())
        let nowhere = RedirectPlan.destination(empty, RedirectTap(platform: .web), clickID: "c", recorded: true, projectLandingPage: nil)
        #expect(nowhere == .preview)
    }
}
