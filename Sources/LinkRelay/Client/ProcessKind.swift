import Foundation

/// What kind of process the client runs in: the app itself, its App Clip, or one of its
/// extensions. Only the app decides an install.
///
/// - In the **App Clip** the client hands its links to the full app (``AppClipHandoff``) and
///   nothing else of the first launch runs: no Keychain marker is placed (iOS carries the
///   Clip's Keychain items over to the full app, whose real first launch would then look like a
///   reinstall), no install match or report, no Apple Ads token, no conversion values. The
///   install outcome there is `.failed` with code `.unsupported`.
/// - In an **extension** sharing the app's store through an App Group, the client reads the
///   launch history but never writes it (an extension run before the app's first launch would
///   make that launch a relaunch), places no marker, and runs no install match: the outcome is
///   the stored one, else `.failed` with code `.unsupported`.
public enum ProcessKind: Sendable, Hashable {
    /// The app.
    case app
    /// The app's App Clip (its Info.plist has `NSAppClip`).
    case appClip
    /// An app extension (its bundle ends in `.appex`): a widget, a share or notification
    /// extension.
    case appExtension

    /// This process, from the main bundle: `NSAppClip` in its Info.plist makes an App Clip, a
    /// bundle path ending in `.appex` an extension; anything else (a test runner, a
    /// command-line tool) is the app.
    public static let current: ProcessKind = kind(
        bundlePath: Bundle.main.bundlePath, isAppClip: Bundle.main.object(forInfoDictionaryKey: "NSAppClip") != nil)

    /// The kind of a process whose main bundle is at `bundlePath`.
    static func kind(bundlePath: String, isAppClip: Bool) -> ProcessKind {
        if isAppClip { return .appClip }
        var path = Substring(bundlePath)
        while path.hasSuffix("/") { path = path.dropLast() }
        return path.hasSuffix(".appex") ? .appExtension : .app
    }

    /// Whether this process decides the install: only the app does.
    var decidesInstall: Bool { self == .app }
}
