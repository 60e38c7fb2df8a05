#if canImport(StoreKit) && os(iOS)
    import Foundation
    import StoreKit
    #if canImport(AdAttributionKit) && !targetEnvironment(macCatalyst)
        import AdAttributionKit
    #endif

    /// Conversion values through the system frameworks the app's ad networks use: AdAttributionKit's
    /// `Postback.updateConversionValue(_:coarseConversionValue:lockPostback:)` (iOS 17.4 and
    /// later; not on Mac Catalyst, where the framework does not exist) and SKAdNetwork 4's
    /// `updatePostbackConversionValue(_:coarseValue:lockWindow:)` (iOS 16.1 and later), each
    /// where the OS has it, with the same value. Apple keeps the two apart (an update through one
    /// reaches only that one's postbacks) and asks an app whose networks use both to call both;
    /// the system ignores a call for a framework with no pending postback, and only one
    /// impression wins an install. Before iOS 16.1 there are no coarse values and one window:
    /// the first window's fine value goes to SKAdNetwork's `updatePostbackConversionValue(_:completionHandler:)`
    /// (iOS 15.4 to 16.0) or `updateConversionValue(_:)` (before 15.4), nothing in the later
    /// windows (``ConversionValueUpdate/singleWindowFineValue``). Each framework is written and
    /// answers on its own: a failure throws ``ConversionWriteFailure`` naming the frameworks that
    /// failed, and only those are written again. This only translates; the policy is
    /// ``ConversionSchema``'s.
    public struct SystemConversionValueWriter: ConversionValueWriter {
        /// The frameworks written to.
        public var frameworks: Set<ConversionFramework>

        /// Values written through `frameworks` (both by default).
        public init(frameworks: Set<ConversionFramework> = [.adAttributionKit, .skAdNetwork]) {
            self.frameworks = frameworks
        }

        public func write(_ update: ConversionValueUpdate) async throws {
            let asked = frameworks.intersection(update.frameworks)
            var wrote = false
            var failed: Set<ConversionFramework> = []
            var reasons: [String] = []
            func note(_ framework: ConversionFramework, _ error: any Error) {
                failed.insert(framework)
                reasons.append("\(framework.rawValue): \((error as NSError).domain) \((error as NSError).code)")
            }
            #if canImport(AdAttributionKit) && !targetEnvironment(macCatalyst)
                if #available(iOS 17.4, *), asked.contains(.adAttributionKit) {
                    wrote = true
                    do {
                        try await Self.writeAdAttributionKit(update)
                    } catch {
                        note(.adAttributionKit, error)
                    }
                }
            #endif
            // SKAdNetwork has no re-engagements.
            if asked.contains(.skAdNetwork), !update.isReengagementOnly {
                if #available(iOS 16.1, *) {
                    let coarse = update.value.coarse.pick(low: SKAdNetwork.CoarseConversionValue.low, medium: .medium, high: .high)
                    wrote = true
                    do {
                        try await SKAdNetwork.updatePostbackConversionValue(
                            update.value.fine, coarseValue: coarse, lockWindow: update.locksWindow)
                    } catch {
                        note(.skAdNetwork, error)
                    }
                } else if let fine = update.singleWindowFineValue {
                    wrote = true
                    do {
                        try await Self.writeSingleWindow(fine)
                    } catch {
                        note(.skAdNetwork, error)
                    }
                } else {
                    // The later windows have no postback before iOS 16.1: nothing is owed.
                    wrote = true
                }
            }
            if !failed.isEmpty { throw ConversionWriteFailure(failed: failed, reason: reasons.joined(separator: "; ")) }
            guard wrote else {
                throw DeepLinkError(
                    .unsupported,
                    "No framework for conversion values here (AdAttributionKit needs iOS 17.4, SKAdNetwork is not on this platform).")
            }
        }

        #if canImport(AdAttributionKit) && !targetEnvironment(macCatalyst)
            /// AdAttributionKit: on iOS 18 for the postbacks the update is for
            /// (`PostbackUpdate.conversionTypes`); before, where there are no re-engagements,
            /// the install's values only.
            @available(iOS 17.4, *)
            private static func writeAdAttributionKit(_ update: ConversionValueUpdate) async throws {
                let coarse = update.value.coarse.pick(low: AdAttributionKit.CoarseConversionValue.low, medium: .medium, high: .high)
                if #available(iOS 18.0, *) {
                    let types = PostbackConversionType.allCases.filter(update.conversionTypes.contains).map {
                        $0.pick(install: PostbackUpdate.ConversionType.install, reengagement: .reengagement)
                    }
                    try await Postback.updateConversionValue(
                        PostbackUpdate(
                            fineConversionValue: update.value.fine, lockPostback: update.locksWindow, coarseConversionValue: coarse,
                            conversionTypes: types.count == PostbackConversionType.allCases.count ? nil : types))
                } else if !update.isReengagementOnly {
                    try await Postback.updateConversionValue(
                        update.value.fine, coarseConversionValue: coarse, lockPostback: update.locksWindow)
                }
            }
        #endif

        /// SKAdNetwork before iOS 16.1: one window, a fine value only.
        private static func writeSingleWindow(_ fine: Int) async throws {
            if #available(iOS 15.4, *) {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    SKAdNetwork.updatePostbackConversionValue(fine) { error in
                        if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                    }
                }
            } else {
                SKAdNetwork.updateConversionValue(fine)
            }
        }
    }

    extension ConversionValues {
        /// `schema`'s values written through the system's `frameworks` (both by default; see
        /// ``SystemConversionValueWriter``).
        public static func system(
            schema: ConversionSchema, frameworks: Set<ConversionFramework> = [.adAttributionKit, .skAdNetwork]
        ) -> ConversionValues {
            ConversionValues(schema: schema, writer: SystemConversionValueWriter(frameworks: frameworks))
        }
    }
#endif
