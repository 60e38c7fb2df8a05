#if canImport(StoreKit) && os(iOS)
    import Foundation
    import StoreKit
    #if canImport(AdAttributionKit)
        import AdAttributionKit
    #endif

    /// Conversion values through the system frameworks the app's ad networks use: AdAttributionKit's
    /// `Postback.updateConversionValue(_:coarseConversionValue:lockPostback:)` (iOS 17.4 and
    /// later) and SKAdNetwork 4's `updatePostbackConversionValue(_:coarseValue:lockWindow:)`
    /// (iOS 16.1 and later), each where the OS has it, with the same value. Apple keeps the two
    /// apart (an update through one reaches only that one's postbacks) and asks an app whose
    /// networks use both to call both; the system ignores a call for a framework with no
    /// pending postback, and only one impression wins an install. Before iOS 16.1 there are no
    /// coarse values or windows, and it throws `.unsupported`. This only translates; the policy
    /// is ``ConversionSchema``'s.
    public struct SystemConversionValueWriter: ConversionValueWriter {
        /// The frameworks written to.
        public var frameworks: Set<ConversionFramework>

        /// Values written through `frameworks` (both by default).
        public init(frameworks: Set<ConversionFramework> = [.adAttributionKit, .skAdNetwork]) {
            self.frameworks = frameworks
        }

        public func write(_ update: ConversionValueUpdate) async throws {
            var wrote = false
            var failure: (any Error)?
            #if canImport(AdAttributionKit)
                if #available(iOS 17.4, *), frameworks.contains(.adAttributionKit) {
                    let coarse = update.value.coarse.pick(low: AdAttributionKit.CoarseConversionValue.low, medium: .medium, high: .high)
                    wrote = true
                    do {
                        try await Postback.updateConversionValue(update.value.fine, coarseConversionValue: coarse, lockPostback: update.locksWindow)
                    } catch {
                        failure = error
                    }
                }
            #endif
            if #available(iOS 16.1, *), frameworks.contains(.skAdNetwork) {
                let coarse = update.value.coarse.pick(low: SKAdNetwork.CoarseConversionValue.low, medium: .medium, high: .high)
                wrote = true
                do {
                    try await SKAdNetwork.updatePostbackConversionValue(update.value.fine, coarseValue: coarse, lockWindow: update.locksWindow)
                } catch {
                    failure = failure ?? error
                }
            }
            if let failure { throw failure }
            guard wrote else {
                throw DeepLinkError(.unsupported, "No framework for conversion values with coarse values and windows here: they need iOS 16.1.")
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
