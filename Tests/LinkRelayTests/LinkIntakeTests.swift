import Foundation
import Testing

@testable import LinkRelay

/// The intake as a state machine: what it starts and what it delivers, step by step.
@Suite("LinkIntake")
struct LinkIntakeTests {
    typealias Intake = LinkIntake<String>

    static func link(_ n: Int) -> URL { URL(string: "myapp://item/\(n)")! }
    static func parsed(_ n: Int) throws -> ParsedLink { try LinkParser.parse(link(n)) }
    static func finished(_ n: Int) throws -> Intake.Finished {
        .link(try parsed(n).deepLink(provider: "test", resolution: .server), handedOver: link(n))
    }

    static func delivered(_ actions: [Intake.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .deliver(.link(_, let url)): url.absoluteString
            case .deliver(.failure(_, let url)): "failure \(url.absoluteString)"
            case .release(let waiter): "release \(waiter)"
            }
        }
    }

    @Test("starts at most the limit, oldest first, and the next one when a slot frees")
    func boundedStarts() throws {
        var intake = Intake(duplicateWindow: 2, limit: 2)
        for n in 0..<4 { intake.enqueue(Self.link(n), parsed: try Self.parsed(n), deadline: 3) }
        let step1 = intake.startable()
        #expect(step1.map(\.ticket) == [0, 1])
        let step2 = intake.startable()
        #expect(step2.isEmpty)
        intake.finish(1, try Self.finished(1))
        let step3 = intake.startable()
        #expect(step3.map(\.ticket) == [2])
        let step4 = intake.startable()
        #expect(step4.isEmpty)
    }

    @Test("delivers in arrival order: a finished link waits for an earlier one still resolving")
    func inOrder() throws {
        var intake = Intake(duplicateWindow: 2, limit: 4)
        for n in 0..<3 { intake.enqueue(Self.link(n), parsed: try Self.parsed(n), deadline: 3) }
        _ = intake.startable()
        intake.finish(2, try Self.finished(2))
        intake.finish(1, try Self.finished(1))
        let step5 = intake.ready()
        #expect(step5.isEmpty)
        intake.finish(0, try Self.finished(0))
        let step6 = intake.ready()
        #expect(Self.delivered(step6) == ["myapp://item/0", "myapp://item/1", "myapp://item/2"])
        #expect(intake.count == 0)
    }

    @Test("links finished at arrival and barriers keep their place in line")
    func finishedAtArrivalAndBarriers() throws {
        var intake = Intake(duplicateWindow: 2, limit: 4)
        intake.enqueue(Self.link(0), parsed: try Self.parsed(0), deadline: 3)
        intake.enqueue(try Self.finished(1))
        intake.enqueue(barrier: "idle")
        intake.enqueue(.failure(DeepLinkError(.invalidURL, "bad"), url: Self.link(2)))
        _ = intake.startable()
        let step7 = intake.ready()
        #expect(step7.isEmpty)
        intake.finish(0, try Self.finished(0))
        let step8 = intake.ready()
        #expect(Self.delivered(step8) == ["myapp://item/0", "myapp://item/1", "release idle", "failure myapp://item/2"])
    }

    @Test("a finish for a ticket that is not resolving is ignored")
    func strayFinish() throws {
        var intake = Intake(duplicateWindow: 2, limit: 1)
        intake.enqueue(Self.link(0), parsed: try Self.parsed(0), deadline: 3)
        intake.finish(0, try Self.finished(0))  // not started yet
        let step9 = intake.ready()
        #expect(step9.isEmpty)
        let step10 = intake.startable()
        #expect(step10.map(\.ticket) == [0])
        intake.finish(7, try Self.finished(7))
        let step11 = intake.ready()
        #expect(step11.isEmpty)
    }

    @Test("removeAll hands back the barriers and forgets the rest")
    func removeAll() throws {
        var intake = Intake(duplicateWindow: 2, limit: 1)
        intake.enqueue(Self.link(0), parsed: try Self.parsed(0), deadline: 3)
        intake.enqueue(barrier: "a")
        intake.enqueue(Self.link(1), parsed: try Self.parsed(1), deadline: 3)
        intake.enqueue(barrier: "b")
        _ = intake.startable()
        let step12 = intake.removeAll()
        #expect(step12 == ["a", "b"])
        #expect(intake.count == 0)
        let step13 = intake.startable()
        #expect(step13.isEmpty)
        let step14 = intake.ready()
        #expect(step14.isEmpty)
    }

    @Test("trim drops the oldest links not under way, never a resolving link or a barrier")
    func trim() throws {
        var intake = Intake(duplicateWindow: 2, limit: 1)
        intake.enqueue(Self.link(0), parsed: try Self.parsed(0), deadline: 3)
        _ = intake.startable()  // 0 resolving
        intake.enqueue(barrier: "b")
        for n in 1...5 { intake.enqueue(Self.link(n), parsed: try Self.parsed(n), deadline: 3) }
        intake.enqueue(try Self.finished(6))
        let dropped = intake.trim(to: 4)
        #expect(dropped == [1, 2, 3, 4].map(Self.link))
        #expect(intake.count == 4)
        intake.finish(0, try Self.finished(0))
        let ready = intake.ready()
        #expect(Self.delivered(ready) == ["myapp://item/0", "release b"])
        let next = intake.startable()
        #expect(next.map(\.url) == [Self.link(5)])
    }

    @Test("the duplicate filter admits a URL once within the window")
    func duplicates() {
        var intake = Intake(duplicateWindow: 2, limit: 1)
        let first = intake.admit(Self.link(0), at: 0)
        let again = intake.admit(Self.link(0), at: 1.9)
        let later = intake.admit(Self.link(0), at: 2)
        #expect(first && !again && later)
    }
}
