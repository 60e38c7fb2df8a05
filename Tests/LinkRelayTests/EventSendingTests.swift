import Foundation
import Testing

@testable import LinkRelay

/// When the event queue is sent, decided with no client, no clock and no task.
@Suite("When events are sent (EventSending)")
struct EventSendingTests {
    /// Paylisher's batching: 50 a request, on its own at 20 waiting or after 30 s; pauses of
    /// 5 s more per failure, at most 30 s.
    let paylisher = EventBatching(maximumBatchSize: 50, flushAt: 20, flushInterval: 30, pauseStep: 5, maximumPause: 30)

    @Test("one event per request: every event is sent as it is tracked, and failures do not pause")
    func oneByOne() {
        var sending = EventSending(batching: nil)
        #expect(sending.batchSize == 1)
        #expect(sending.eventsWaiting(1, othersMayHaveSome: false, now: 0) == .flush)
        #expect(sending.failed(size: 1, tooLarge: false, now: 0) == .none)
        #expect(sending.pausedUntil == nil)
    }

    @Test("batches: at flushAt waiting, at once; below it, a timer flushInterval after; an armed timer is kept")
    func flushAtAndInterval() {
        var sending = EventSending(batching: paylisher)
        #expect(sending.eventsWaiting(0, othersMayHaveSome: false, now: 0) == .none)
        #expect(sending.eventsWaiting(1, othersMayHaveSome: false, now: 10) == .armTimer(at: 40))
        #expect(sending.eventsWaiting(5, othersMayHaveSome: false, now: 20) == .none)  // the timer at 40 stands
        #expect(sending.eventsWaiting(20, othersMayHaveSome: false, now: 21) == .flush)
        #expect(sending.timerFired(deadline: 40, now: 40) == .flush)
        #expect(sending.timerDeadline == nil)
    }

    @Test("a folder shared with other processes may hold their events: a timer is armed though none is ours")
    func sharedFolder() {
        var sending = EventSending(batching: paylisher)
        #expect(sending.eventsWaiting(0, othersMayHaveSome: true, now: 0) == .armTimer(at: 30))
    }

    @Test("failed batches pause automatic sending 5, 10, … s, at most 30; a sent one ends the pause")
    func pauses() {
        var sending = EventSending(batching: paylisher)
        #expect(sending.failed(size: 50, tooLarge: false, now: 100) == .armTimer(at: 105))
        #expect(sending.eventsWaiting(25, othersMayHaveSome: false, now: 101) == .none)  // paused; the timer stands
        #expect(sending.timerFired(deadline: 105, now: 105) == .flush)
        #expect(sending.failed(size: 50, tooLarge: false, now: 106) == .armTimer(at: 116))
        for _ in 0..<10 { _ = sending.failed(size: 50, tooLarge: false, now: 200) }
        #expect(sending.pausedUntil == 230)
        sending.sent()
        #expect(sending.failuresInARow == 0 && sending.pausedUntil == nil)
        #expect(sending.eventsWaiting(25, othersMayHaveSome: false, now: 201) == .flush)
    }

    @Test("a timer that fires during a pause waits for its end; a replaced timer does nothing")
    func timerDuringPause() {
        var sending = EventSending(batching: paylisher)
        _ = sending.eventsWaiting(1, othersMayHaveSome: false, now: 0)  // a timer at 30
        #expect(sending.failed(size: 1, tooLarge: false, now: 1) == .armTimer(at: 6))  // replaced
        #expect(sending.timerFired(deadline: 30, now: 30) == .none)
        #expect(sending.timerFired(deadline: 6, now: 6) == .flush)
    }

    @Test("a 413 halves the batch size and flushAt, never below 1, and keeps them halved")
    func tooLarge() {
        var sending = EventSending(batching: paylisher)
        _ = sending.failed(size: 50, tooLarge: true, now: 0)
        #expect(sending.batchSize == 25)
        #expect(sending.batching?.flushAt == 10)
        _ = sending.failed(size: 7, tooLarge: true, now: 0)
        #expect(sending.batchSize == 3)
        for _ in 0..<10 { _ = sending.failed(size: 2, tooLarge: true, now: 0) }
        #expect(sending.batchSize == 1 && sending.batching?.flushAt == 1)
        sending.sent()
        sending.reset()
        #expect(sending.batchSize == 1)
    }

    @Test("values outside their range: an infinite interval arms no timer, a zero one sends at once, sizes below 1 count as 1")
    func edges() {
        var never = EventSending(batching: EventBatching(maximumBatchSize: 0, flushAt: 1000, flushInterval: .infinity))
        #expect(never.batchSize == 1)
        #expect(never.eventsWaiting(5, othersMayHaveSome: false, now: 0) == .none)
        var atOnce = EventSending(batching: EventBatching(maximumBatchSize: 50, flushAt: 1000, flushInterval: 0))
        #expect(atOnce.eventsWaiting(1, othersMayHaveSome: false, now: 0) == .flush)
        var nan = EventSending(batching: EventBatching(maximumBatchSize: 50, flushAt: 20, flushInterval: .nan, pauseStep: .nan))
        #expect(nan.eventsWaiting(1, othersMayHaveSome: false, now: 0) == .flush)  // a NaN interval counts as 0
        #expect(nan.failed(size: 50, tooLarge: false, now: 0) == .armTimer(at: 0))
    }

    @Test("the queue drained, no timer is needed")
    func drained() {
        var sending = EventSending(batching: paylisher)
        _ = sending.eventsWaiting(1, othersMayHaveSome: false, now: 0)
        sending.drained()
        #expect(sending.timerDeadline == nil)
        #expect(sending.timerFired(deadline: 30, now: 30) == .none)
    }
}
