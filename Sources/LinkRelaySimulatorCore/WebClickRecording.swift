import Foundation
import LinkRelay

/// What every emulation does the same way: record a tap on one of its links in a phone's
/// browser before the app is installed, so that the app's first launch can be matched to it.
///
/// All four emulations read alike:
///
/// ```swift
/// try linkForty.recordWebClick(url: URL(string: "https://go.acme.app/spring")!, from: device)
/// try limeLink.recordWebClick(url: URL(string: "https://abc123.limelink.org/link/summer")!, from: device)
/// try dynalinks.recordWebClick(url: URL(string: "https://acme.dynalinks.app/shoes")!, from: device)
/// try paylisher.recordWebClick(url: URL(string: "diyetim://products/42")!, from: device)
/// ```
///
/// Each reads from `device` what that provider's landing page collects (LinkForty: time zone,
/// language and native screen; LimeLink: screen in points and OS version; Dynalinks: CSS
/// screen, pixel ratio, OS version, time zone, calendar and language; Paylisher: the model
/// family, time zone and language), and from `url` which link was tapped.
public protocol WebClickRecording: Sendable {
    /// The clock a click is dated on when no date is given: the simulator's, for an emulation
    /// added with the simulator's `add…` method (a `ManualClock` in tests), so the click falls
    /// inside the provider's attribution window of the install that follows.
    var clock: any LinkRelayClock { get }

    /// Records a tap on `url` in the browser of `device`, from the public address `ip`, at `date`.
    ///
    /// - Parameters:
    ///   - url: The link as tapped. The emulation finds its link from it (LinkForty's short code,
    ///     LimeLink's suffix, Dynalinks' path or shortened path); for Paylisher, whose bridge page
    ///     stores the app URL it is handing on, any URL.
    ///   - device: The phone, as its browser shows it.
    ///   - ip: The phone's public address; default ``ProviderSimulator/defaultClientIP``, the
    ///     address the simulator gives the app's requests unless told otherwise, so a click and
    ///     the install that follows come from the same network.
    ///   - date: When the tap happened (match windows count from it).
    /// - Throws: ``UnknownLinkError`` when the emulation has no link at `url`: a test that
    ///   scripts a click on a mistyped link fails there, not later as a deferred link that never came.
    func recordWebClick(url: URL, from device: DeviceInfo, ip: String, at date: Date) throws
}

extension WebClickRecording {
    /// Records a tap on `url` from `ip` (default ``ProviderSimulator/defaultClientIP``) at
    /// ``clock``'s current date (see ``recordWebClick(url:from:ip:at:)``).
    public func recordWebClick(url: URL, from device: DeviceInfo, ip: String = ProviderSimulator.defaultClientIP) throws {
        try recordWebClick(url: url, from: device, ip: ip, at: clock.currentDate)
    }
}

/// A web click on a link the emulation does not have.
public struct UnknownLinkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The provider whose emulation was asked ("LinkForty", "LimeLink", "Dynalinks", "Paylisher").
    public let provider: String
    /// The URL tapped.
    public let url: URL

    /// An error for a click on `url`, which `provider`'s emulation has no link for.
    public init(provider: String, url: URL) {
        self.provider = provider
        self.url = url
    }

    /// The provider and the URL, for a test's failure message.
    public var description: String { "The \(provider) emulation has no link for \(url.absoluteString)." }
}
