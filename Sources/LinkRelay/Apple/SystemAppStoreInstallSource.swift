#if canImport(StoreKit) && os(iOS)
    import Foundation
    import StoreKit

    /// StoreKit 2's `AppTransaction.shared` as an ``AppStoreInstallSource``, with the creation
    /// date of the app's data container as the date this copy was installed. On iOS 15 there
    /// is no `AppTransaction`: the answer is `.unavailable`. This only translates; the rule is
    /// ``AppStoreInstallCheck``'s.
    ///
    /// Reading the container's creation date is a file-timestamp API: LinkRelay's privacy
    /// manifest declares it with reason C617.1 (inside the app's own container).
    public struct SystemAppStoreInstallSource: AppStoreInstallSource {
        /// The system's record.
        public init() {}

        public func appStoreInstall() async -> AppStoreInstallResult {
            guard #available(iOS 16, *) else { return .unavailable(reason: "AppTransaction needs iOS 16") }
            let result: VerificationResult<AppTransaction>
            do {
                result = try await AppTransaction.shared
            } catch {
                return .unavailable(reason: "\((error as NSError).domain) \((error as NSError).code)")
            }
            switch result {
            case .unverified(_, let error):
                return .unverified(reason: "\(error)")
            case .verified(let transaction):
                return .verified(
                    AppStoreInstall(
                        environment: Self.environment(transaction.environment),
                        originalPurchaseDate: transaction.originalPurchaseDate,
                        originalAppVersion: transaction.originalAppVersion,
                        installedOnDevice: Self.containerCreated()))
            }
        }

        @available(iOS 16, *)
        private static func environment(_ environment: AppStore.Environment) -> AppStoreInstall.Environment {
            switch environment {
            case .production: .production
            case .sandbox: .sandbox
            case .xcode: .xcode
            default: .other(environment.rawValue)
            }
        }

        /// The creation date of the app's data container (its home folder), which an update
        /// keeps and a reinstall makes anew.
        private static func containerCreated() -> Date? {
            let attributes = try? FileManager.default.attributesOfItem(atPath: NSHomeDirectory())
            return attributes?[.creationDate] as? Date
        }
    }

    extension AppStoreInstallCheck {
        /// The App Store's record through StoreKit 2, waited for at most 1 s: the default on
        /// iOS.
        public static let system = AppStoreInstallCheck(source: SystemAppStoreInstallSource())
    }
#endif
