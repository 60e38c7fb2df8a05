import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting

/// The device of the reference's examples: an iPhone 15 Pro in New York. (Here, in a file without
/// a test framework, so that the iOS type-check of the support files finds it.)
let newYorkPhone = DeviceInfo(
    screen: .init(width: 393, height: 852, scale: 3), osName: "iOS", osVersion: "17.4.1", deviceModel: "iPhone16,1",
    timeZoneIdentifier: "America/New_York", preferredLanguages: ["en-US"], regionCode: "US", appVersion: "2.3.0",
    appBuild: "412")

/// A client configuration against `simulator` on `clock`: the New York phone, in-memory storage,
/// no retries, no Keychain marker.
func simulatorConfiguration(_ simulator: ProviderSimulator, clock: ManualClock) -> DeepLinkClient.Configuration {
    var configuration = DeepLinkClient.Configuration()
    configuration.clock = clock
    configuration.transport = simulator
    configuration.store = InMemoryStore()
    configuration.deviceInfo = StaticDeviceInfo(newYorkPhone)
    configuration.retryPolicy = .none
    configuration.installMarker = nil
    return configuration
}
