import Foundation
import Testing

@testable import LinkRelay

/// The first-launch state on its own: one run per generation, the outcome and its waiters, the
/// reminder that `start()` was not called, and what a clear and a shutdown do.
@Suite("First launch (FirstLaunch)", .timeLimit(.minutes(1)))
struct FirstLaunchTests {
    @Test("start() makes one run per generation; a clear starts a new generation, and the next start a new run")
    func oneRunPerGeneration() async {
        var state = FirstLaunch()
        #expect(!state.isStarted)
        var generations: [UInt64] = []
        let (first, started) = state.startRun { generation in
            generations.append(generation)
            return Task {}
        }
        let (again, startedAgain) = state.startRun { _ in
            Issue.record("a second run"); return Task {}
        }
        #expect(started && !startedAgain && first == again && state.isStarted)
        let old = state.generation
        state.reset()
        #expect(!state.isStarted && !state.isCurrent(old))
        _ = state.startRun { generation in
            generations.append(generation)
            return Task {}
        }
        #expect(generations == [old, state.generation])
    }

    @Test("the outcome resumes every waiter; a clear keeps the waiters for the next run's outcome")
    func waiters() async {
        let state = Locked(FirstLaunch())
        let outcome = InstallOutcome.organic(nil)
        async let first: InstallOutcome = withCheckedContinuation { continuation in
            state.withLock { $0.addWaiter($0.newWaiterID(), continuation) }
        }
        async let second: InstallOutcome = withCheckedContinuation { continuation in
            state.withLock { $0.addWaiter($0.newWaiterID(), continuation) }
        }
        // Both waiters are in once their continuations are taken (no sleep: the test yields).
        while state.withLock({ $0.waiterCount }) < 2 { await Task.yield() }
        state.withLock { $0.reset() }
        let waitingAfterClear = state.withLock { $0.waiterCount }
        #expect(waitingAfterClear == 2)
        for waiter in state.withLock({ $0.decide(outcome) }) { waiter.resume(returning: outcome) }
        #expect(await [first, second] == [outcome, outcome])
        let (decided, waiting) = state.withLock { ($0.outcome, $0.waiterCount) }
        #expect(decided == outcome && waiting == 0)
    }

    @Test("the start reminder: scheduled once while pending; due only when not started, undecided and awaited")
    func startReminder() {
        var state = FirstLaunch()
        let first = state.needsStartReminder()
        let whilePending = state.needsStartReminder()
        let dueWithNobodyWaiting = state.startReminderFired()
        let afterItFired = state.needsStartReminder()
        _ = state.startRun { _ in Task {} }
        let dueOnceStarted = state.startReminderFired()
        #expect(first && !whilePending && afterItFired)
        #expect(!dueWithNobodyWaiting && !dueOnceStarted)
    }

    @Test("at shutdown the waiters get the decided outcome, or the one given for an undecided launch")
    func close() async {
        var state = FirstLaunch()
        let failed = InstallOutcome.failed(DeepLinkError(.shutdown, "shut down"))
        #expect(state.close(undecided: failed).outcome == failed)
        _ = state.decide(.organic(nil))
        #expect(state.close(undecided: failed).outcome == .organic(nil))
    }
}
