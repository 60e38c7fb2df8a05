import Foundation
import Hummingbird
import LinkRelay
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import LinkRelayServer
@testable import LinkRelayServerCore
@testable import LinkRelayServerDashboard
@testable import LinkRelayServerHTTP
@testable import LinkRelayServerStorage
@testable import LinkRelayServerTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Graceful shutdown: a request under way when the server is told to stop is answered, and its
/// write is kept; then the server stops.
@Suite("Graceful shutdown", .timeLimit(.minutes(1)))
struct ShutdownTests {
    @Test(
        "shutdown asked while an install is being written: the install is answered 200 and stored, then the server ends",
        arguments: TestEngine.available)
    func midRequest(_ engine: TestEngine) async throws {
        try await ServerWorld.with(engine) { world in
            let store = GatedStore(world.store)
            let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
            let app = ServerApplication.application(
                store: store, configuration: ServerConfiguration(port: 0, trustProxy: true), logger: Logger(label: "test"),
                onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) })
            let group = ServiceGroup(services: [app], logger: Logger(label: "test"))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                var portIterator = ports.makeAsyncIterator()
                let port = try #require(await portIterator.next())
                var request = LinkRelay.HTTPRequest(
                    method: .post, url: URL(string: "http://127.0.0.1:\(port)/api/sdk/v1/install")!,
                    headers: [
                        "Authorization": "Bearer \(world.sdkKey)", "Content-Type": "application/json", "X-Forwarded-For": "198.51.100.4",
                    ])
                request.body = try JSONEncoder().encode(HTTPTest.installBody)
                let sent = Task { [request] in try await URLSessionTransport().send(request) }
                await store.entered()  // the request is inside the store, writing
                await group.triggerGracefulShutdown()
                store.open()
                let response = try await sent.value
                #expect(response.status == 200)
                let answer = try JSONDecoder().decode([String: JSONValue].self, from: response.body)
                let installID = try #require(answer["installId"]?.stringValue)
                #expect(try await world.store.install(project: world.project.id, id: installID) != nil)
                try await tasks.next()  // the server has ended
            }
        }
    }
}

/// A store whose install writes wait until the test opens the gate, saying when one arrived.
final class GatedStore: ServerStore {
    private let inner: any ServerStore
    private let arrivals: AsyncStream<Void>
    private let arrival: AsyncStream<Void>.Continuation
    private let gate: AsyncStream<Void>
    private let opening: AsyncStream<Void>.Continuation

    init(_ inner: any ServerStore) {
        self.inner = inner
        (arrivals, arrival) = AsyncStream.makeStream(of: Void.self)
        (gate, opening) = AsyncStream.makeStream(of: Void.self)
    }

    /// Returns once an install write is waiting.
    func entered() async {
        for await _ in arrivals { return }
    }

    /// Lets every install write through.
    func open() {
        opening.finish()
    }

    func recordInstall(_ install: InstallRecord) async throws {
        arrival.yield()
        for await _ in gate {}
        try await inner.recordInstall(install)
    }

    func migrate() async throws -> [Int] { try await inner.migrate() }
    func appliedMigrations() async throws -> [Int] { try await inner.appliedMigrations() }
    func createProject(name: String, at date: Date) async throws -> Project { try await inner.createProject(name: name, at: date) }
    func projects() async throws -> [Project] { try await inner.projects() }
    func insertKey(_ key: APIKeyRecord) async throws { try await inner.insertKey(key) }
    func key(prefix: String) async throws -> APIKeyRecord? { try await inner.key(prefix: prefix) }
    func keys(project: String) async throws -> [APIKeyRecord] { try await inner.keys(project: project) }
    func revokeKey(id: String, at date: Date) async throws -> Bool { try await inner.revokeKey(id: id, at: date) }
    func insertTemplate(_ template: TemplateRecord) async throws { try await inner.insertTemplate(template) }
    func template(project: String, id: String) async throws -> TemplateRecord? { try await inner.template(project: project, id: id) }
    func template(project: String, slug: String) async throws -> TemplateRecord? { try await inner.template(project: project, slug: slug) }
    func insertLink(_ link: LinkRecord) async throws { try await inner.insertLink(link) }
    func updateLink(_ link: LinkRecord) async throws -> Bool { try await inner.updateLink(link) }
    func link(project: String?, shortCode: String, templateSlug: String?) async throws -> LinkRecord? {
        try await inner.link(project: project, shortCode: shortCode, templateSlug: templateSlug)
    }
    func link(project: String, dedupeKey: String) async throws -> LinkRecord? {
        try await inner.link(project: project, dedupeKey: dedupeKey)
    }
    func link(id: String) async throws -> LinkRecord? { try await inner.link(id: id) }
    func cachedLink(id: String) async throws -> LinkRecord? { try await inner.cachedLink(id: id) }
    func recordClick(_ click: ClickRecord) async throws { try await inner.recordClick(click) }
    func clicks(link: String) async throws -> [ClickRecord] { try await inner.clicks(link: link) }
    func links(project: String, filter: LinkFilter, after cursor: LinkCursor?, limit: Int) async throws -> [LinkRecord] {
        try await inner.links(project: project, filter: filter, after: cursor, limit: limit)
    }
    func clickCounts(links: [String]) async throws -> [String: Int] { try await inner.clickCounts(links: links) }
    func insertSession(_ session: DashboardSession) async throws { try await inner.insertSession(session) }
    func linkCount(project: String) async throws -> Int { try await inner.linkCount(project: project) }
    func dailyClicks(project: String, link: String?, fromDay: Int, toDay: Int) async throws -> DailyClicks {
        try await inner.dailyClicks(project: project, link: link, fromDay: fromDay, toDay: toDay)
    }
    func clicks(link: String, after cursor: TimeCursor?, limit: Int) async throws -> [ClickRecord] {
        try await inner.clicks(link: link, after: cursor, limit: limit)
    }
    func installs(project: String, after cursor: TimeCursor?, limit: Int) async throws -> [InstallRecord] {
        try await inner.installs(project: project, after: cursor, limit: limit)
    }
    func eventSummary(project: String, from: Date, to: Date) async throws -> [EventDay] {
        try await inner.eventSummary(project: project, from: from, to: to)
    }
    func installs(project: String, link: String?, limit: Int) async throws -> [InstallRecord] {
        try await inner.installs(project: project, link: link, limit: limit)
    }
    func session(hash: String, at now: Date) async throws -> DashboardSession? { try await inner.session(hash: hash, at: now) }
    func deleteSession(hash: String) async throws { try await inner.deleteSession(hash: hash) }
    func deleteSessions(expiredBefore cutoff: Date) async throws -> Int { try await inner.deleteSessions(expiredBefore: cutoff) }
    func deleteLink(project: String, id: String) async throws -> Bool { try await inner.deleteLink(project: project, id: id) }
    func clickSummary(project: String, link: String?, from: Date, to: Date) async throws -> ClickSummary {
        try await inner.clickSummary(project: project, link: link, from: from, to: to)
    }
    func installSummary(project: String, link: String?, from: Date, to: Date) async throws -> [NamedCount] {
        try await inner.installSummary(project: project, link: link, from: from, to: to)
    }
    func deleteClicks(before date: Date, limit: Int) async throws -> Int { try await inner.deleteClicks(before: date, limit: limit) }
    func maintainClickPartitions(now: Date, droppingBefore cutoff: Date?) async throws -> Int {
        try await inner.maintainClickPartitions(now: now, droppingBefore: cutoff)
    }
    func analyzeNewClickPartitions() async throws -> [String] {
        try await inner.analyzeNewClickPartitions()
    }
    func matchCandidates(project: String, networkPrefix: String, since: Date, limit: Int) async throws -> [MatchCandidate] {
        try await inner.matchCandidates(project: project, networkPrefix: networkPrefix, since: since, limit: limit)
    }
    func matchCandidates(project: String, address: String, since: Date, limit: Int) async throws -> [MatchCandidate] {
        try await inner.matchCandidates(project: project, address: address, since: since, limit: limit)
    }
    func networkDevices(project: String, networkPrefix: String, at now: Date, since: Date, limit: Int) async throws -> Int {
        try await inner.networkDevices(project: project, networkPrefix: networkPrefix, at: now, since: since, limit: limit)
    }
    func install(project: String, id: String) async throws -> InstallRecord? { try await inner.install(project: project, id: id) }
    func addAppleAdsToken(_ token: String, install id: String, project: String) async throws -> Bool {
        try await inner.addAppleAdsToken(token, install: id, project: project)
    }
    func latestInstall(project: String, fingerprintHash: String) async throws -> InstallRecord? {
        try await inner.latestInstall(project: project, fingerprintHash: fingerprintHash)
    }
    func recordEvent(_ event: EventRecord) async throws -> EventOutcome { try await inner.recordEvent(event) }
    func events(install: String) async throws -> [EventRecord] { try await inner.events(install: install) }
    func insertApp(_ app: AppRecord) async throws { try await inner.insertApp(app) }
    func apps() async throws -> [AppRecord] { try await inner.apps() }
    func counts() async throws -> StoreCounts { try await inner.counts() }
    func writeProblem(at date: Date) async -> String? { await inner.writeProblem(at: date) }
    func destinationHosts(project: String) async throws -> DestinationHosts { try await inner.destinationHosts(project: project) }
    func setDestinationHosts(project: String, _ hosts: DestinationHosts) async throws {
        try await inner.setDestinationHosts(project: project, hosts)
    }
    func learnDestinationHosts(project: String, hosts: [String]) async throws {
        try await inner.learnDestinationHosts(project: project, hosts: hosts)
    }
    func learnStoredDestinationHosts() async throws -> Int { try await inner.learnStoredDestinationHosts() }
    func landingPage(project: String) async throws -> LandingPageSettings { try await inner.landingPage(project: project) }
    func setLandingPage(project: String, _ settings: LandingPageSettings) async throws {
        try await inner.setLandingPage(project: project, settings)
    }
    func insertClickToken(_ token: ClickTokenRecord) async throws { try await inner.insertClickToken(token) }
    func useClickToken(hash: String, project: String, installID: String, at now: Date) async throws -> ClickTokenUse {
        try await inner.useClickToken(hash: hash, project: project, installID: installID, at: now)
    }
    func releaseClickToken(hash: String, installID: String) async throws {
        try await inner.releaseClickToken(hash: hash, installID: installID)
    }
    func deleteClickTokens(expiredBefore cutoff: Date) async throws -> Int { try await inner.deleteClickTokens(expiredBefore: cutoff) }
    func close() async throws {}
    func run() async throws { try await inner.run() }
    func checkConnection() async throws { try await inner.checkConnection() }
}
