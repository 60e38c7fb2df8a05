// The simulator is assembled from the providers' emulations (Adapters/<Provider>/Emulation) and
// the world they plug into: `import LinkRelaySimulator` gives all of them.
@_exported import LinkRelaySimulatorCore
@_exported import LinkRelayDynalinksEmulation
@_exported import LinkRelayLimeLinkEmulation
@_exported import LinkRelayLinkFortyEmulation
@_exported import LinkRelayPaylisherEmulation
