#if canImport(StoreKit) && os(iOS)
    import Foundation
    import StoreKit
    #if canImport(AdAttributionKit)
        import AdAttributionKit
    #endif

    /// Conversion values through one system framework, chosen by the OS version: AdAttributionKit's
    /// `Postback.updateConversionValue(_:coarseConversionValue:lockPostback:)` on iOS 17.4 and
    /// later (Apple applies it to SKAdNetwork's postbacks too), else SKAdNetwork 4's
    /// `updatePostbackConversionValue(_:coarseValue:lockWindow:)` on iOS 16.1 and later; never
    /// both for one value. Before iOS 16.1 there are no coarse values or windows, and it answers
    /// `.unsupported`. This only translates; the policy is ``ConversionSchema``'s.
    public struct SystemConversionValueWriter: ConversionValueWriter {
        /// The system's frameworks.
        public init() {}

        public func write(_ update: ConversionValueUpdate) async throws {
            #if canImport(AdAttributionKit)
                if #available(iOS 17.4, *) {
                    let coarse: AdAttributionKit.CoarseConversionValue =
                        switch update.value.coarse {
                        case .low: .low
                        case .medium: .medium
                        case .high: .high
                        }
                    try await Postback.updateConversionValue(update.value.fine, coarseConversionValue: coarse, lockPostback: update.locksWindow)
                    return
                }
            #endif
            guard #available(iOS 16.1, *) else {
                throw DeepLinkError(.unsupported, "Conversion values with coarse values and windows need iOS 16.1.")
            }
            let coarse: SKAdNetwork.CoarseConversionValue =
                switch update.value.coarse {
                case .low: .low
                case .medium: .medium
                case .high: .high
                }
            try await SKAdNetwork.updatePostbackConversionValue(update.value.fine, coarseValue: coarse, lockWindow: update.locksWindow)
        }
    }

    extension ConversionValues {
        /// `schema`'s values written through the system (``SystemConversionValueWriter``).
        public static func system(schema: ConversionSchema) -> ConversionValues {
            ConversionValues(schema: schema, writer: SystemConversionValueWriter())
        }
    }
#endif
