import Foundation
import LinkRelay
import LinkRelayTesting

// Work for instruction counts (`Benchmarks/count-instructions`): the same scenario run with N
// and 2N operations under callgrind, so the difference is the marginal cost of N operations,
// free of start-up and set-up.
//
//   linkrelay-instructions subscribe LIVE CALLS
//     a client with LIVE live subscribers; then CALLS times: events() and drop the stream
//     (a subscribe and an unsubscribe).

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 3, arguments.first == "subscribe",
    let live = Int(arguments[arguments.startIndex + 1]), let calls = Int(arguments[arguments.startIndex + 2])
else {
    FileHandle.standardError.write(Data("usage: linkrelay-instructions subscribe LIVE CALLS\n".utf8))
    exit(64)
}

var configuration = DeepLinkClient.Configuration(store: InMemoryStore())
configuration.deviceInfo = StaticDeviceInfo()
let client = DeepLinkClient(backend: LocalBackend(.init(hosts: ["go.acme.app"])), configuration: configuration)
let kept = (0..<live).map { _ in client.events() }
for _ in 0..<calls {
    let stream = client.events()
    withExtendedLifetime(stream) {}
}
// Reported so the work is not optimised away, and so a run shows what it did.
print("subscribers kept: \(kept.count), subscribed and dropped: \(calls)")
