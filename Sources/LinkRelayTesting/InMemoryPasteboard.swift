import Foundation
import LinkRelay

/// A scriptable pasteboard for tests of ``/LinkRelay/PasteboardCheck``: put a text or a URL on
/// it, say whether the user allows the paste, hold the read until the test lets it answer, and
/// read back what the client asked.
///
/// ```swift
/// let pasteboard = InMemoryPasteboard()
/// pasteboard.copy("https://go.acme.app/spring?lr_click=…")
/// configuration.pasteboardCheck = PasteboardCheck(pasteboard: pasteboard)
/// ```
public final class InMemoryPasteboard: LinkPasteboard, Sendable {
    /// What the client asked of the pasteboard, in order.
    public enum Call: Sendable, Hashable {
        /// ``probablyHoldsWebURL()``.
        case detect
        /// ``readLink()``: the read that shows iOS's "Allow Paste" alert.
        case read
        /// ``clear(ifUnchangedSince:)`` with this change count.
        case clear(Int)
    }

    private struct State: Sendable {
        var text: String?
        var changeCount = 0
        var allowsPaste = true
        var holdsReads = false
        var heldReads: [CheckedContinuation<Void, Never>] = []
        var calls: [Call] = []
    }

    private let state = Locked(State())

    /// An empty pasteboard.
    public init() {}

    /// Puts `text` on the pasteboard (as a copy does: the change count goes up).
    public func copy(_ text: String?) {
        state.withLock {
            $0.text = text
            $0.changeCount += 1
        }
    }

    /// What the pasteboard holds.
    public var text: String? { state.withLock { $0.text } }

    /// The pasteboard's change count.
    public var changeCount: Int { state.withLock { $0.changeCount } }

    /// Whether the user answers "Allow Paste" (`false`: "Don't Allow", the read finds nothing).
    /// Default `true`.
    public var allowsPaste: Bool {
        get { state.withLock { $0.allowsPaste } }
        set { state.withLock { $0.allowsPaste = newValue } }
    }

    /// While `true`, a read waits (the user has not answered the alert yet) until
    /// ``answerReads()``.
    public var holdsReads: Bool {
        get { state.withLock { $0.holdsReads } }
        set { state.withLock { $0.holdsReads = newValue } }
    }

    /// Lets the reads held so far answer.
    public func answerReads() {
        let held = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.holdsReads = false
            defer { state.heldReads.removeAll() }
            return state.heldReads
        }
        for read in held { read.resume() }
    }

    /// How many reads are waiting for ``answerReads()``.
    public var heldReadCount: Int { state.withLock { $0.heldReads.count } }

    /// Every call so far.
    public var calls: [Call] { state.withLock { $0.calls } }

    /// How many times the pasteboard was read (each a "Allow Paste" alert on iOS).
    public var readCount: Int { calls.filter { $0 == .read }.count }

    public func probablyHoldsWebURL() async -> Bool {
        state.withLock { state in
            state.calls.append(.detect)
            return state.text.flatMap(CertainLink.pastedURL) != nil
        }
    }

    public func readLink() async -> PastedLink? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let holds = state.withLock { state -> Bool in
                state.calls.append(.read)
                if state.holdsReads { state.heldReads.append(continuation) }
                return state.holdsReads
            }
            if !holds { continuation.resume() }
        }
        return state.withLock { state in
            guard state.allowsPaste, let url = state.text.flatMap(CertainLink.pastedURL) else { return nil }
            return PastedLink(url: url, changeCount: state.changeCount)
        }
    }

    public func clear(ifUnchangedSince changeCount: Int) async {
        state.withLock { state in
            state.calls.append(.clear(changeCount))
            guard state.changeCount == changeCount else { return }
            state.text = nil
            state.changeCount += 1
        }
    }
}
