#if canImport(StoreKit) && os(iOS)
    import Foundation
    import StoreKit

    /// StoreKit 2's `AppTransaction.shared` as an ``AppStoreInstallSource``, with the creation
    /// date of the app's `Library` folder (`Documents` where there is none) as the date this
    /// copy was installed. On iOS 15 there is no `AppTransaction`: the answer is `.unavailable`.
    /// In a simulator, a debug build, or a build with a sandbox receipt (TestFlight,
    /// development) StoreKit is not asked at all: it can show an Apple Account sign-in there,
    /// and its record would decide nothing. This only translates; the rule is
    /// ``AppStoreInstallCheck``'s.
    ///
    /// Reading the folder's creation date is a file-timestamp API: LinkRelay's privacy
    /// manifest declares it with reason C617.1 (inside the app's own container).
    public struct SystemAppStoreInstallSource: AppStoreInstallSource {
        /// The system's record.
        public init() {}

        public func appStoreInstall() async -> AppStoreInstallResult {
            guard #available(iOS 16, *) else { return .unavailable(reason: "AppTransaction needs iOS 16") }
            guard
                AppStoreInstallCheck.asksSystem(
                    receiptName: Bundle.main.appStoreReceiptURL?.lastPathComponent, isSimulator: Self.isSimulator,
                    isDebugBuild: Self.isDebugBuild)
            else { return .unavailable(reason: "not asked in a simulator, a debug build or a sandbox (TestFlight) build") }
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
                        installedOnDevice: Self.containerCreated(), originalAppVersionIsBuild: !Self.runsOnMac))
            }
        }

        /// Mac Catalyst, or an iPhone or iPad app on a Mac: StoreKit's `originalAppVersion` is
        /// then the marketing version, not the build.
        private static let runsOnMac: Bool = {
            #if targetEnvironment(macCatalyst)
                return true
            #else
                return ProcessInfo.processInfo.isiOSAppOnMac
            #endif
        }()

        @available(iOS 16, *)
        private static func environment(_ environment: AppStore.Environment) -> AppStoreInstall.Environment {
            switch environment {
            case .production: .production
            case .sandbox: .sandbox
            case .xcode: .xcode
            default: .other(environment.rawValue)
            }
        }

        /// The creation date of the app's `Library` folder (as Branch's SDK reads it; the
        /// container's root can be recreated by the system), `Documents` where there is no
        /// `Library`: an update keeps it, a reinstall makes it anew.
        private static func containerCreated() -> Date? {
            let manager = FileManager.default
            let folder =
                manager.urls(for: .libraryDirectory, in: .userDomainMask).first
                ?? manager.urls(for: .documentDirectory, in: .userDomainMask).first
            guard let folder, let attributes = try? manager.attributesOfItem(atPath: folder.path) else { return nil }
            return attributes[.creationDate] as? Date
        }

        private static let isSimulator: Bool = {
            #if targetEnvironment(simulator)
                return true
            #else
                return false
            #endif
        }()

        private static let isDebugBuild: Bool = {
            #if DEBUG
                return true
            #else
                return false
            #endif
        }()
    }

    extension AppStoreInstallCheck {
        /// The App Store's record through StoreKit 2, waited for at most 1 s: the default on
        /// iOS.
        public static let system = AppStoreInstallCheck(source: SystemAppStoreInstallSource())
    }
#endif
