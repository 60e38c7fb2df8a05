import Foundation

extension DeepLinkClient {
    // MARK: - Certain deferred links (the pasteboard, the App Clip)

    /// Hands the client a link the user pasted: from `LinkPasteButton` or `LinkPasteControl`
    /// on an onboarding screen (the user's tap is the consent; iOS shows no alert), or from a
    /// paste control of your own (``CertainLink/pastedURL(_:)`` reads a pasted text).
    ///
    /// The link counts as the install's certain deferred link
    /// (``InstallAttribution/Method/pasteboard``, confidence 100):
    /// - before the install outcome is decided (also before ``start()``), the first-launch run
    ///   takes it instead of asking for a fingerprint match;
    /// - after it, the link is delivered once, as a deferred link, if no deferred link was
    ///   delivered for this install; the outcome already reported stays as it was.
    ///
    /// - Returns: whether the client took the link: `false` for a link that is not one of the
    ///   backend's (`http` or `https` with one of its hosts), after a deferred link was
    ///   delivered, when another certain link was taken, and after ``shutdown()``.
    @discardableResult
    public func handlePastedLink(_ url: URL) async -> Bool {
        guard CertainLink.isWebLink(url), backend.canHandle(url) else {
            logger.info("The pasted text is not one of the backend's links; ignored.")
            return false
        }
        return await offer(CertainLink(url: url, source: .pasteboard))
    }

    /// A certain link found outside the first-launch run (a paste, a pasteboard read that ended
    /// after its wait), offered to the first-launch steps: kept for the install while no
    /// outcome is final, and delivered now when this launch's outcome is already decided and
    /// no deferred link was delivered.
    private func offer(_ certain: CertainLink) async -> Bool {
        await feed(.offered(certain), generation: firstLaunch.generation) ?? false
    }

    /// The App Clip's saved link, looked at once per install (``Configuration/appClipHandoff``),
    /// when it is one of the backend's; one that is not is removed from the App Group at once.
    func lookAtAppClip() -> CertainLink? {
        guard let handoff = configuration.appClipHandoff, !handoff.isAppClip else { return nil }
        let historyStore = launchHistoryStore()
        var checks = historyStore.load(CertainLinkChecks.self, forKey: CertainLinkChecks.key, logger: logger) ?? CertainLinkChecks()
        guard !checks.appClipChecked else { return nil }
        // Marked before it is looked at: whatever happens next, never twice.
        checks.appClipChecked = true
        historyStore.save(checks, forKey: CertainLinkChecks.key, logger: logger)
        guard let saved = handoff.saved() else { return nil }
        guard CertainLink.isWebLink(saved.url), backend.canHandle(saved.url) else {
            logger.info("The App Clip left a link that is not one of the backend's; not taken.")
            removeAppClipLink()
            return nil
        }
        logger.info("Took the App Clip's link from the App Group.")
        return CertainLink(url: saved.url, source: .appClip)
    }

    /// Removes the App Clip's link from the App Group (kept in the install record first).
    func removeAppClipLink() {
        guard let handoff = configuration.appClipHandoff else { return }
        do {
            try handoff.remove()
            logger.debug("Removed the App Clip's link from the App Group.")
        } catch {
            logger.warning("The App Clip's link could not be removed from the App Group; it is not taken again on this install.")
        }
    }

    /// Reads the pasteboard, once per install (``Configuration/pasteboardCheck``).
    func readPasteboardOnce(generation: UInt64) async -> CertainLink? {
        guard let check = configuration.pasteboardCheck, markPasteboardRead() else { return nil }
        return await readPasteboard(check, generation: generation)
    }

    /// Marks the pasteboard as read for this install without reading it.
    func skipPasteboard(_ reason: String) {
        if markPasteboardRead() { logger.info("\(reason)") }
    }

    /// Marks the pasteboard as read for this install, before it is read: whatever happens
    /// next, never twice. `false` when it was read already.
    private func markPasteboardRead() -> Bool {
        let historyStore = launchHistoryStore()
        var checks = historyStore.load(CertainLinkChecks.self, forKey: CertainLinkChecks.key, logger: logger) ?? CertainLinkChecks()
        guard !checks.pasteboardRead else { return false }
        checks.pasteboardRead = true
        historyStore.save(checks, forKey: CertainLinkChecks.key, logger: logger)
        return true
    }

    /// Asks the pasteboard silently, reads it only when it probably holds a web URL, and waits
    /// for the answer at most the check's timeout; a link read later is offered as a late
    /// paste.
    private func readPasteboard(_ check: PasteboardCheck, generation: UInt64) async -> CertainLink? {
        let pasteboard = check.pasteboard
        let read = Task { () -> PastedLink? in
            guard await pasteboard.probablyHoldsWebURL() else { return nil }
            return await pasteboard.readLink()
        }
        let timeout = check.timeout
        let pasted: PastedLink?
        do {
            pasted = try await withDeadline(
                clock.uptime + timeout, on: clock,
                timeoutError: { DeepLinkError(.timedOut, "The pasteboard did not answer within \(timeout) s.") },
                operation: { await read.value })
        } catch {
            logger.info(
                "The pasteboard did not answer within \(timeout) s; the install goes on without it (a link read later is still delivered once)."
            )
            Task { [weak self] in
                guard let late = await read.value else { return }
                await self?.lateRead(late, from: pasteboard, generation: generation)
            }
            return nil
        }
        guard let pasted else {
            logger.debug("The pasteboard holds no web link (or the paste was not allowed).")
            return nil
        }
        return await accept(pasted, from: pasteboard)
    }

    private func lateRead(_ pasted: PastedLink, from pasteboard: any LinkPasteboard, generation: UInt64) async {
        guard mayCommit(generation), let certain = await accept(pasted, from: pasteboard) else { return }
        _ = await offer(certain)
    }

    /// `pasted` as the install's certain link when it is one of the backend's, the pasteboard
    /// cleared if it still holds it; `nil` (and the pasteboard left alone) otherwise.
    private func accept(_ pasted: PastedLink, from pasteboard: any LinkPasteboard) async -> CertainLink? {
        guard CertainLink.isWebLink(pasted.url), backend.canHandle(pasted.url) else {
            logger.info("The pasteboard holds a link that is not one of the backend's; left there.")
            return nil
        }
        await pasteboard.clear(ifUnchangedSince: pasted.changeCount)
        logger.info("Read the tapped link from the pasteboard.")
        return CertainLink(url: pasted.url, source: .pasteboard)
    }

    /// The certain link resolved as a universal link of the backend is (the same deadline and
    /// local fallback), as a deferred link; `nil` when it cannot be delivered at all (its
    /// destination is refused, the client is shut down).
    func certainDeepLink(_ certain: CertainLink) async -> DeepLink? {
        do {
            var link = try await resolve(certain.url)
            link.origin = .deferred
            link.id = DeepLink.stableID(url: link.url, origin: .deferred, provider: link.provider)
            return link
        } catch {
            logger.warning("The certain link (\(certain.source.rawValue)) cannot be delivered: \(error)")
            return nil
        }
    }

    /// In the App Clip (``AppClipHandoff/isAppClip``): keeps a web link of the backend the Clip
    /// handled (an invocation URL is one) for the full app.
    func saveForFullApp(_ url: URL) {
        guard let handoff = configuration.appClipHandoff, handoff.isAppClip, CertainLink.isWebLink(url) else { return }
        do {
            try handoff.save(url, at: clock.currentDate)
            logger.debug("Saved the link for the full app in the App Group.")
        } catch {
            logger.warning("The link could not be saved in the App Group for the full app.")
        }
    }
}
