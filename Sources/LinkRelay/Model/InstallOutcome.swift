/// The one terminal result of an install's first launch.
///
/// Exactly one outcome is reported per install, as ``DeepLinkEvent/install(_:)`` and from
/// ``DeepLinkClient/installOutcome()``.
public enum InstallOutcome: Sendable, Hashable, Codable {
    /// The install was matched to a click on this link.
    case attributed(DeepLink, InstallAttribution)
    /// No click matched. The attribution, when the provider sent one, carries its install id.
    case organic(InstallAttribution?)
    /// The match could not be made (network, server, decoding); it is tried again on a later
    /// launch.
    case failed(DeepLinkError)
    /// The provider did not answer within the install-match deadline. A later answer is still
    /// delivered, marked ``InstallAttribution/isLate``.
    case timedOut
}
