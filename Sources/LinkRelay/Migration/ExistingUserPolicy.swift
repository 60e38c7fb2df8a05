/// What the install match does for a user who had the app before the current backend first
/// ran (``AppLaunch/isExistingUser``).
///
/// A deferred match looks for a recent click from a device like this one. For a user who has
/// had the app for months it can only find an old click, or someone else's: the false matches
/// Paylisher's own documentation describes for reinstalls. So by default an existing user gets
/// no install match.
public enum ExistingUserPolicy: Sendable, Hashable, Codable {
    /// No install-match request: the outcome is ``InstallOutcome/existingUser(_:)`` (with the
    /// install id kept from the previous SDK, if any), and no deferred link is delivered.
    case skipInstallMatch
    /// The install match is made and its result reported in the outcome, but a deferred link is
    /// not delivered: for apps that want the provider's view without acting on it.
    case matchButDoNotDeliver
    /// The install match runs as for a new install, and a deferred link is delivered.
    case treatAsNew
}
