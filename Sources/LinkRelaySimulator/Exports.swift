@_exported import LinkRelayDynalinksEmulation
@_exported import LinkRelayLimeLinkEmulation
@_exported import LinkRelayLinkFortyEmulation
@_exported import LinkRelayPaylisherEmulation
// The simulator is assembled from the providers' emulations (Adapters/<Provider>/Emulation) and
// the world they plug into: `import LinkRelaySimulator` gives all of them. This file is the
// simulator's list of providers: a new provider's emulation is one import and one entry below.
@_exported import LinkRelaySimulatorCore

extension Sandbox {
    /// Every provider's emulation the Sandbox serves, in the order it lists them.
    public static let emulations: [any SandboxEmulation.Type] = [
        LinkFortyEmulation.self, LimeLinkEmulation.self, DynalinksEmulation.self, PaylisherEmulation.self,
    ]
}

extension SandboxProvider {
    /// Every provider the Sandbox serves, in the order of ``Sandbox/emulations``.
    public static let allCases: [SandboxProvider] = Sandbox.emulations.map { $0.sandboxProvider }
}

extension SandboxSettings {
    /// The host `provider`'s path-prefixed requests are served as; `nil` for a provider the
    /// Sandbox does not serve.
    public func apiHost(of provider: SandboxProvider) -> String? {
        Sandbox.emulations.first { $0.sandboxProvider == provider }?.apiHost(in: self)
    }

    /// Every host `provider` answers for (`*.` for every subdomain); none for a provider the
    /// Sandbox does not serve.
    public func hosts(of provider: SandboxProvider) -> [String] {
        Sandbox.emulations.first { $0.sandboxProvider == provider }?.hosts(in: self) ?? []
    }
}
