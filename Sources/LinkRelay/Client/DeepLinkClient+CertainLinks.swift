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
    /// after its wait): kept for the install while no outcome is final, and delivered now when
    /// this launch's outcome is already decided and no deferred link was delivered.
    private func offer(_ certain: CertainLink) async -> Bool {
        guard !isShutDown else { return false }
        var record = loadInstallRecord()
        if record.matched == nil {
            guard record.certainLink == nil else {
                logger.info("This install already has its certain link; the pasted one is not taken.")
                return false
            }
            // Kept first: the run under way (or the next start(), or the next launch's) settles
            // the install with it instead of a fingerprint.
            record.certainLink = certain
            saveInstallRecord(record)
            guard firstLaunch.outcome != nil else {
                logger.info("A certain link (\(certain.source.rawValue)) arrived before the install outcome; it is the deferred link.")
                return true
            }
        }
        guard !record.deferredLinkDelivered else {
            logger.info("The deferred link was already delivered for this install; the pasted link is not delivered.")
            return false
        }
        guard let link = await certainDeepLink(certain) else { return false }
        record = loadInstallRecord()
        guard !record.deferredLinkDelivered, !isShutDown else { return false }
        record.deferredLinkDelivered = true
        saveInstallRecord(record)
        logger.info("A certain link (\(certain.source.rawValue)) arrived after the install outcome; delivered as the deferred link.")
        deliver(link, handedOver: certain.url)
        return true
    }

    /// The install's certain link, if it has one: kept from before (a paste, a launch cut
    /// short), else, on a new install's first run only, the App Clip's hand-off, then the
    /// pasteboard (``Configuration/pasteboardCheck``), each looked at once per install.
    func findCertainLink(for launch: AppLaunch, generation: UInt64) async -> CertainLink? {
        if let kept = loadInstallRecord().certainLink { return kept }
        let isNewInstall: Bool =
            switch launch.kind {
            case .firstInstall, .reinstall: true
            case .existingUser: configuration.existingUsers == .treatAsNew
            case .update, .relaunch: false
            }
        guard isNewInstall, configuration.appClipHandoff != nil || configuration.pasteboardCheck != nil else { return nil }
        let historyStore = launchHistoryStore()
        var checks = historyStore.load(CertainLinkChecks.self, forKey: CertainLinkChecks.key, logger: logger) ?? CertainLinkChecks()
        var found: CertainLink?
        if let handoff = configuration.appClipHandoff, !handoff.isAppClip, !checks.appClipChecked {
            // Marked before it is looked at: whatever happens next, never twice.
            checks.appClipChecked = true
            historyStore.save(checks, forKey: CertainLinkChecks.key, logger: logger)
            found = takeAppClipLink(handoff)
        }
        if found == nil, let check = configuration.pasteboardCheck, !checks.pasteboardRead {
            checks.pasteboardRead = true
            historyStore.save(checks, forKey: CertainLinkChecks.key, logger: logger)
            if directLinkReceived.withLock({ $0 }) {
                logger.info("A link opened the app; the pasteboard is not read.")
            } else if !configuration.deferredDeepLinksEnabled {
                // Its link could not be delivered: no alert for nothing.
                logger.info("Deferred deep links are off; the pasteboard is not read.")
            } else {
                found = await readPasteboard(check, generation: generation)
            }
        }
        guard mayCommit(generation) else { return nil }
        var record = loadInstallRecord()
        // A paste while the pasteboard was read is kept already; it wins over nothing else.
        if let kept = record.certainLink { return kept }
        guard let found else { return nil }
        record.certainLink = found
        saveInstallRecord(record)
        return found
    }

    /// The App Clip's saved link, when it is one of the backend's, kept in the install record
    /// before it is removed from the App Group.
    private func takeAppClipLink(_ handoff: AppClipHandoff) -> CertainLink? {
        guard let saved = handoff.saved() else { return nil }
        let certain = CertainLink(url: saved.url, source: .appClip)
        let usable = CertainLink.isWebLink(saved.url) && backend.canHandle(saved.url)
        if usable {
            var record = loadInstallRecord()
            record.certainLink = record.certainLink ?? certain
            saveInstallRecord(record)
        } else {
            logger.info("The App Clip left a link that is not one of the backend's; not taken.")
        }
        do {
            try handoff.remove()
        } catch {
            logger.warning("The App Clip's link could not be removed from the App Group; it is not taken again on this install.")
        }
        logger.info(usable ? "Took the App Clip's link from the App Group." : "Removed the App Clip's link from the App Group.")
        return usable ? certain : nil
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
            logger.info("The pasteboard did not answer within \(timeout) s; the install goes on without it (a link read later is still delivered once).")
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

    /// Settles the install with its certain link: delivers it (once per install, by the same
    /// rules as a matched deferred link) without waiting for anything, then decides the outcome
    /// `.attributed` with the source's method and confidence 100. A backend that names the
    /// install only in its install report (``DeepLinkBackend/needsInstallReport``) is sent the
    /// report with the link (``BackendContext/certainLink``) unless `report` is its answer
    /// already; the outcome waits for it at most ``Configuration/installMatchTimeout``, and a
    /// later launch sends it again until it is answered. Returns `false` when the link cannot be
    /// delivered at all (the caller goes on as if there were none).
    func settle(_ certain: CertainLink, generation: UInt64, report: InstallMatch? = nil) async -> Bool {
        guard let link = await certainDeepLink(certain) else {
            var record = loadInstallRecord()
            record.certainLink = nil
            saveInstallRecord(record)
            return false
        }
        guard mayCommit(generation) else { return true }
        var attribution = InstallAttribution(
            installID: report?.attribution.installID, isAttributed: true, confidence: .init(score: 100),
            method: certain.source == .appClip ? .appClip : .pasteboard)
        let needsReport = backend.needsInstallReport && report == nil
        var record = loadInstallRecord()
        record.matched = .attributed(link, attribution)
        record.lastFailure = nil
        record.installReportPending = needsReport ? true : nil
        // The report counts as a launch's match: sent again on later launches, up to
        // ``Configuration/maximumInstallMatchLaunches`` in all.
        if needsReport { record.matchLaunches += 1 }
        let deliverable = shouldDeliverDeferred(link, attribution: attribution, record: record)
        if deliverable != nil { record.deferredLinkDelivered = true }
        // Saved before publishing: a crash after this point cannot deliver the link twice.
        saveInstallRecord(record)
        if let deliverable { deliver(deliverable, handedOver: certain.url) }
        if needsReport, let installID = await reportCertainInstall(certain, generation: generation) {
            attribution.installID = installID
        }
        guard mayCommit(generation) else { return true }
        decide(.attributed(link, attribution), publish: true)
        return true
    }

    /// Sends the install report of a certain link (with the client's retries) and waits for it
    /// at most ``Configuration/installMatchTimeout``: the install id it names, kept in the
    /// install record, or `nil` (a later answer is still kept; a failure leaves the report
    /// pending for the next launch).
    func reportCertainInstall(_ certain: CertainLink, generation: UInt64) async -> String? {
        var context = await makeContext()
        context.certainLink = certain
        context.appleAdsToken = await appleAdsToken(generation: generation)
        let work = startMatch(context: context)
        if let result = await result(of: work) {
            let installID = keepReported(result, generation: generation)
            await addLateAppleAdsToken(generation: generation)
            return installID
        }
        logger.info("The install report timed out after \(configuration.installMatchTimeout) s; a later answer still names the install.")
        Task { [weak self] in
            let late = await work.value
            _ = await self?.keepReported(late, generation: generation)
            await self?.addLateAppleAdsToken(generation: generation)
        }
        return nil
    }

    /// The install id of a certain link's report, kept in the stored outcome.
    private func keepReported(_ result: MatchResult, generation: UInt64) -> String? {
        guard mayCommit(generation) else { return nil }
        switch result {
        case .failed(let error):
            let failure = error.redacted(by: redactor)
            logger.warning("The install report failed (sent again on the next launch): \(failure.description)")
            reportIfCredentialsRejected(failure, during: "Reporting the install")
            return nil
        case .matched(let match):
            var record = loadInstallRecord()
            record.installReportPending = nil
            if case .attributed(let link, var attribution) = record.matched, let installID = match.attribution.installID {
                attribution.installID = installID
                record.matched = .attributed(link, attribution)
            }
            saveInstallRecord(record)
            return match.attribution.installID
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
