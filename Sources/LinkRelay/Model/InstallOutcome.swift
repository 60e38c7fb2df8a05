/// The one terminal result of an install's first launch.
///
/// Exactly one outcome is reported per install, as ``DeepLinkEvent/install(_:)`` and from
/// ``DeepLinkClient/installOutcome()``.
public enum InstallOutcome: Sendable, Hashable, Codable {
    /// The install was matched to a click on this link.
    case attributed(DeepLink, InstallAttribution)
    /// The install was matched to a click, but the provider's answer carries no link the app
    /// can open: a Dynalinks link with only its `id`, a Paylisher match whose `url` is `null`
    /// (its SDK reports `matchFoundButURLIsNil`), a match whose URL is not a URL. Nothing is
    /// delivered. The match is final, as in the providers' SDKs: it is not tried again.
    /// ``InstallAttribution/linkID`` names the link when the provider does.
    case attributedWithoutLink(InstallAttribution)
    /// No click matched. The attribution, when the provider sent one, carries its install id.
    case organic(InstallAttribution?)
    /// The match could not be made (network, server, decoding); it is tried again on a later
    /// launch.
    case failed(DeepLinkError)
    /// The provider did not answer within the install-match deadline. A later answer is still
    /// delivered, marked ``InstallAttribution/isLate``.
    case timedOut
    /// Not an install: the app was on this device before this backend first ran (an update
    /// that switched backends, or the first launch after replacing a vendor's SDK; see
    /// ``AppLaunch/isExistingUser``), and ``DeepLinkClient/Configuration/existingUsers`` is
    /// ``ExistingUserPolicy/skipInstallMatch``: no install match was asked for, so no old
    /// click can be taken for this user's. The attribution carries the install id kept from the
    /// previous SDK, when there is one (``PreviousSDK/installID``). Final, like a match.
    case existingUser(InstallAttribution?)
}

extension InstallOutcome {
    /// What the provider said about the install, when it answered: the attribution of an
    /// attributed install (with or without a link) or an organic one; `nil` for `.failed`,
    /// `.timedOut`, and an organic install the provider sent nothing about. For an existing user,
    /// the identity kept from the previous SDK, if any.
    public var attribution: InstallAttribution? {
        switch self {
        case .attributed(_, let attribution), .attributedWithoutLink(let attribution): attribution
        case .organic(let attribution), .existingUser(let attribution): attribution
        case .failed, .timedOut: nil
        }
    }

    /// Whether the provider matched the install to a click, whether or not it sent a link.
    public var isAttributed: Bool {
        switch self {
        case .attributed, .attributedWithoutLink: true
        case .organic, .failed, .timedOut, .existingUser: false
        }
    }
}
