#if canImport(UIKit) && !os(watchOS)
    import Foundation
    import UIKit

    /// UIKit's protected-data state as a ``ProtectedDataAvailability``:
    /// `UIApplication.isProtectedDataAvailable`, read on the main actor, and
    /// `protectedDataDidBecomeAvailableNotification` to wake the waiters. This only translates;
    /// the waiting is ``AvailabilitySignal``'s.
    ///
    /// In an app extension there is no `UIApplication`: it answers available, and a store or
    /// Keychain read that fails there is still unreadable, never absent.
    public struct SystemProtectedData: ProtectedDataAvailability {
        /// The one instance: it registers for the notification once per process.
        public static let shared = SystemProtectedData()

        private static let signal: AvailabilitySignal = {
            let signal = AvailabilitySignal()
            _ = NotificationCenter.default.addObserver(
                forName: UIApplication.protectedDataDidBecomeAvailableNotification, object: nil, queue: nil
            ) { _ in signal.raise() }
            return signal
        }()

        private static let isExtension = Bundle.main.bundlePath.hasSuffix(".appex")

        private init() {}

        public func isAvailable() async -> Bool {
            guard !Self.isExtension else { return true }
            return await MainActor.run { UIApplication.shared.isProtectedDataAvailable }
        }

        public func waitUntilAvailable() async {
            let signal = Self.signal
            while !Task.isCancelled {
                // Read before asking, so a notification between the two is not missed.
                let seen = signal.count
                if await isAvailable() { return }
                await signal.wait(after: seen)
            }
        }
    }
#endif
