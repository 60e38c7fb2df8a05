import Foundation

extension DeepLinkClient {
    /// Sets the app's id for the signed-in user (or clears it with `nil`). It may be set before
    /// ``start()``; it is kept in memory only, handed to the backend with every call, and
    /// attached to ``createLink(_:)`` requests that do not name a user of their own.
    public func setExternalUserID(_ id: String?) {
        session.externalUserID = id
    }

    /// Creates a link with the provider (a share or referral link).
    ///
    /// - Throws: ``DeepLinkError`` `.unsupported` when the backend cannot create links,
    ///   `.shutdown` after ``shutdown()``; the backend's error otherwise, after the client's
    ///   retries and within ``Configuration/requestTimeout``.
    public func createLink(_ request: LinkRequest) async throws -> CreatedLink {
        guard !isShutDown else { throw shutdownError() }
        guard backend.capabilities.contains(.linkCreation), let creator = backend as? any LinkCreatingBackend else {
            throw DeepLinkError(
                .unsupported, "The \(backend.id) backend does not create links (check client.capabilities for .linkCreation).",
                backend: backend.id)
        }
        var request = request
        if request.externalUserID == nil { request.externalUserID = externalUserID }
        let finalRequest = request
        do {
            return try await self.request("Creating the link", timeout: configuration.requestTimeout) { context in
                try await creator.createLink(finalRequest, context: context)
            }
        } catch let error as DeepLinkError {
            throw error.redacted(by: redactor)
        }
    }

    /// Removes everything this client stored (install state and outcome, the deferred-link
    /// marker, the backend's values, the event queue, the app's launch history), the external
    /// user id, and events held for a subscriber. The next ``start()`` behaves like a first
    /// launch (``AppLaunch/Kind/firstInstall``, or ``AppLaunch/Kind/reinstall`` where the
    /// platform's install marker survives). Work started before it (an install match, an event
    /// flush) commits nothing when it ends. What a previous vendor SDK left is not touched, and
    /// not imported again: the one value kept is the list of providers whose SDK was read.
    ///
    /// Use it when the user deletes their account or asks for their data to be erased. It
    /// also works after ``shutdown()``.
    public func clearData() {
        // A queue write still under way must land before everything is removed, not after.
        eventJournal?.writer?.flush()
        // What was looked at once per install stays (it may share the store), as it was stored:
        // which previous SDKs were imported (what the user asked to erase is not imported
        // again), the certain sources (the pasteboard is not read, and an App Clip's link
        // not taken, again), and the conversion values the system holds (they never decrease).
        let historyStore = launchHistoryStore()
        let kept = [CheckedSDKs.key, CertainLinkChecks.key, ConversionAccount.key].compactMap { key in
            (try? historyStore.data(forKey: key)).flatMap { $0 }.map { (key, $0) }
        }
        do {
            try store().removeAll()
        } catch {
            logger.error("Could not remove every stored value.")
        }
        // The launch history too: the next start() is a first launch (or, where a Keychain
        // marker tells, a reinstall).
        historyStore.remove(LaunchHistory.key, logger: logger)
        for (key, data) in kept {
            do {
                try historyStore.setData(data, forKey: key)
            } catch {
                logger.error("Could not keep '\(key)' across the clear.")
            }
        }
        firstLaunch.reset()
        directLinkReceived.withLock { $0 = false }
        eventJournal?.reset()
        eventQueue.reset()
        session.reset()
        broadcaster.forgetUndelivered()
    }
}
