import Foundation

extension DeepLinkClient {
    /// Holds a link that needs a signed-in user and publishes
    /// ``DeepLinkEvent/authenticationRequired(_:)``. A link already held is replaced, with a
    /// ``DeepLinkEvent/pendingLinkDropped(_:_:)`` event saying so.
    func hold(_ link: DeepLink) {
        let clock = configuration.clock
        let deadline = clock.uptime + configuration.pendingLinkTimeout
        let replaced = signInHold.hold(link) { generation in
            Task { [weak self] in
                do {
                    try await clock.sleep(untilUptime: deadline)
                } catch {
                    return
                }
                await self?.expirePendingLink(generation: generation)
            }
        }
        if let replaced { publish(.pendingLinkDropped(replaced, .replaced)) }
        publish(.authenticationRequired(link))
    }

    /// Delivers the link held for sign-in as a ``DeepLinkEvent/link(_:)``. Call it once the
    /// user has signed in.
    ///
    /// - Returns: the delivered link, or `nil` when none was held.
    @discardableResult
    public func completePendingLink() -> DeepLink? {
        guard let link = signInHold.take() else { return nil }
        publish(.link(link))
        return link
    }

    /// Drops the link held for sign-in (the user declined), with a
    /// ``DeepLinkEvent/pendingLinkDropped(_:_:)`` event.
    ///
    /// - Returns: the dropped link, or `nil` when none was held.
    @discardableResult
    public func cancelPendingLink() -> DeepLink? {
        guard let link = signInHold.take() else { return nil }
        publish(.pendingLinkDropped(link, .cancelled))
        return link
    }

    private func expirePendingLink(generation: UInt64) {
        guard generation == signInHold.generation, let link = signInHold.take() else { return }
        logger.info("The link waiting for sign-in expired: \(link.path)")
        publish(.pendingLinkDropped(link, .expired))
    }

}
