import Foundation

/// linkrelay-demo: the main job. Part one shows link delivery with `LocalBackend`; part two
/// shows the first launch, a restart and an outage with a scripted provider.
@main
struct Demo {
    static func main() async {
        await LocalDemo.run()
        await LaunchDemo.run()
    }
}
