import Foundation
import LinkRelay
import LinkRelaySimulator
import LinkRelayTesting

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
