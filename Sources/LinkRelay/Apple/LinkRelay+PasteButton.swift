#if canImport(SwiftUI) && (os(iOS) || os(visionOS) || os(macOS))
    import SwiftUI

    /// SwiftUI's `PasteButton` (iOS 16 and later) for an onboarding screen: the user's tap is
    /// the consent, so the system shows no "Allow Paste" alert; the pasted link goes to
    /// ``DeepLinkClient/handlePastedLink(_:)``. Place it where the user is told that the link
    /// they tapped before installing is on the clipboard.
    ///
    /// ```swift
    /// LinkPasteButton(client: client) { taken in if taken { dismissOnboarding() } }
    /// ```
    @available(iOS 16.0, macOS 13.0, *)
    public struct LinkPasteButton: View {
        private let client: DeepLinkClient
        private let onPaste: @MainActor @Sendable (Bool) -> Void

        /// A button that hands what is pasted to `client`; `onPaste` hears whether the client
        /// took it (one of the backend's links, not delivered before), on the main actor: UI
        /// code belongs in it.
        public init(client: DeepLinkClient, onPaste: @escaping @MainActor @Sendable (Bool) -> Void = { _ in }) {
            self.client = client
            self.onPaste = onPaste
        }

        public var body: some View {
            // Text, not URL: a landing page writes the link as text.
            PasteButton(payloadType: String.self) { texts in
                let url = texts.lazy.compactMap(CertainLink.pastedURL).first
                let client = self.client
                let onPaste = self.onPaste
                Task {
                    let taken = if let url { await client.handlePastedLink(url) } else { false }
                    onPaste(taken)
                }
            }
        }
    }
#endif
