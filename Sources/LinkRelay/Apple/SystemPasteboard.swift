#if canImport(UIKit) && (os(iOS) || os(visionOS))
    import UIKit

    /// UIKit's general pasteboard as a ``LinkPasteboard``: asked with
    /// `detectPatterns(for: [\.probableWebURL])` (no alert), read once through `url` or `string`
    /// as the silent `hasURLs`/`hasStrings` say (the "Allow Paste" alert on iOS 16 and later), cleared only while its `changeCount` is
    /// the one read. The logic that decides when to call it is the client's, tested on every
    /// platform; this only translates.
    public struct SystemPasteboard: LinkPasteboard {
        /// The general pasteboard.
        public init() {}

        public func probablyHoldsWebURL() async -> Bool {
            await withCheckedContinuation { continuation in
                let pattern: PartialKeyPath<UIPasteboard.DetectedValues> = \UIPasteboard.DetectedValues.probableWebURL
                UIPasteboard.general.detectPatterns(for: [pattern]) { result in
                    let found = (try? result.get())?.contains(pattern) == true
                    continuation.resume(returning: found)
                }
            }
        }

        public func readLink() async -> PastedLink? {
            // The getters cannot return before the user answers "Allow Paste": on LinkRelay's
            // own queue, never on Swift's cooperative pool.
            await BlockingCall.run { Self.read() }
        }

        private static func read() -> PastedLink? {
            let pasteboard = UIPasteboard.general
            let changeCount = pasteboard.changeCount
            // One read of the contents (each may show the alert), chosen by the silent `has…`:
            // a shared link is a URL; a landing page writes text (`navigator.clipboard.writeText`).
            if pasteboard.hasURLs {
                guard let url = pasteboard.url, CertainLink.isWebLink(url) else { return nil }
                return PastedLink(url: url, changeCount: changeCount)
            }
            guard pasteboard.hasStrings, let text = pasteboard.string, let url = CertainLink.pastedURL(text) else { return nil }
            return PastedLink(url: url, changeCount: changeCount)
        }

        public func clear(ifUnchangedSince changeCount: Int) async {
            let pasteboard = UIPasteboard.general
            guard pasteboard.changeCount == changeCount else { return }
            pasteboard.items = []
        }
    }

    extension PasteboardCheck {
        /// The general pasteboard, waited for at most 5 s.
        public static let system = PasteboardCheck(pasteboard: SystemPasteboard())
    }

    /// A paste control for a UIKit onboarding screen (`UIPasteControl`, iOS 16 and later): the
    /// user's tap is the consent, so iOS shows no "Allow Paste" alert; the pasted link goes to
    /// ``DeepLinkClient/handlePastedLink(_:)``. Place it where the user is told that the link
    /// they tapped before installing is on the clipboard.
    ///
    /// ```swift
    /// let paste = LinkPasteControl(client: client)
    /// stack.addArrangedSubview(paste)
    /// ```
    @available(iOS 16.0, *)
    @MainActor
    public final class LinkPasteControl: UIView {
        private let client: DeepLinkClient
        private let onPaste: @MainActor @Sendable (Bool) -> Void
        /// The system control: style it through its `configuration`.
        public let control: UIPasteControl

        /// A control that hands what is pasted to `client`; `onPaste` hears whether the client
        /// took it (one of the backend's links, not delivered before), on the main actor.
        public init(
            client: DeepLinkClient, configuration: UIPasteControl.Configuration = UIPasteControl.Configuration(),
            onPaste: @escaping @MainActor @Sendable (Bool) -> Void = { _ in }
        ) {
            self.client = client
            self.onPaste = onPaste
            self.control = UIPasteControl(configuration: configuration)
            super.init(frame: .zero)
            pasteConfiguration = UIPasteConfiguration(acceptableTypeIdentifiers: ["public.url", "public.plain-text"])
            control.target = self
            control.translatesAutoresizingMaskIntoConstraints = false
            addSubview(control)
            NSLayoutConstraint.activate([
                control.leadingAnchor.constraint(equalTo: leadingAnchor), control.trailingAnchor.constraint(equalTo: trailingAnchor),
                control.topAnchor.constraint(equalTo: topAnchor), control.bottomAnchor.constraint(equalTo: bottomAnchor),
            ])
        }

        @available(*, unavailable)
        required init?(coder: NSCoder) {
            fatalError("LinkPasteControl is made in code.")
        }

        public override func paste(itemProviders: [NSItemProvider]) {
            guard let provider = itemProviders.first else { return }
            let client = self.client
            let onPaste = self.onPaste
            if provider.canLoadObject(ofClass: URL.self) {
                _ = provider.loadObject(ofClass: URL.self) { url, _ in
                    Self.hand(url, to: client, then: onPaste)
                }
            } else {
                _ = provider.loadObject(ofClass: String.self) { text, _ in
                    Self.hand(text.flatMap(CertainLink.pastedURL), to: client, then: onPaste)
                }
            }
        }

        private nonisolated static func hand(
            _ url: URL?, to client: DeepLinkClient, then onPaste: @escaping @MainActor @Sendable (Bool) -> Void
        ) {
            Task {
                let taken = if let url { await client.handlePastedLink(url) } else { false }
                await onPaste(taken)
            }
        }
    }
#endif
