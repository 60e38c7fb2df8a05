import Foundation

// The install's steps of ``FirstLaunchSteps``: from `start()` to the outcome and the deferred
// link, and links offered from outside the run.
extension FirstLaunchSteps {
    // MARK: The install's events

    /// Whether a launch of this kind is a new install for the certain links and the deferred
    /// link.
    var skipsMatch: Bool {
        launch?.isExistingUser == true && setup.existingUsers == .skipInstallMatch
    }

    mutating func recordUnreadable(locked: Bool) -> [Action] {
        guard case .readingRecord = installPhase else { return [] }
        if locked {
            installPhase = .locked
            return [.waitForProtectedData]
        }
        let failure = DeepLinkError(
            .storage, "The install record cannot be read; the install match waits for the next launch.", backend: setup.backend)
        return [.log(.error, failure.message)] + finish(deciding: .failed(failure), publish: false)
    }

    mutating func recordRead(_ record: InstallRecord) -> [Action] {
        guard case .readingRecord = installPhase else { return [] }
        guard setup.processKind.decidesInstall else { return settleOutsideTheApp(record) }
        var actions: [Action] = []
        let reportsInstall = !skipsMatch || (setup.needsInstallReport && previousInstallID == nil)
        // The Apple Ads token at once, in parallel with the rest of the first launch: the call
        // has been measured at 1.5 s.
        if reportsInstall, record.matched == nil { actions.append(.askForAppleAdsToken) }
        if let matched = record.matched {
            actions.append(.log(.debug, "Install already matched on an earlier launch; restoring the outcome."))
            actions += decide(matched, publish: false)
            // A certain link's report not answered yet: sent again, on as many launches as a
            // match is tried (a late Apple Ads token follows its answer).
            if record.installReportPending == true, setup.needsInstallReport, let certain = record.certainLink,
                record.matchLaunches < setup.maximumMatchLaunches, case .attributed(let link, let attribution) = matched
            {
                var counted = record
                counted.matchLaunches += 1
                installPhase = .waitingForToken(.report(certain, link: link, attribution: attribution, decides: false))
                return actions + [.save(counted), .waitForToken]
            }
            installPhase = .done
            return actions + [.addLateAppleAdsToken]
        }
        if skipsMatch, reportsInstall {
            actions.append(
                .log(
                    .info,
                    "The app was on this device before this backend, which names the install only in its install match; asking for it, without delivering a deferred link."
                ))
        } else if skipsMatch {
            actions.append(
                .log(
                    .info,
                    "The app was on this device before this backend (\(launch.map { String(describing: $0.kind) } ?? "unknown")); no install match is asked for."
                ))
            let outcome = InstallOutcome.existingUser(previousInstallID.map { InstallAttribution.organic(installID: $0) })
            var settled = record
            settled.matched = outcome
            return actions + [.save(settled)] + finish(deciding: outcome, publish: true)
        }
        // The link itself, when it reached the install (an App Clip, the pasteboard, a paste):
        // delivered as the deferred link, and no fingerprint match asked for.
        if let kept = record.certainLink {
            installPhase = .resolving(kept, pending: nil)
            return actions + [.resolveCertainLink(kept)]
        }
        return actions + lookForCertainLink(record: record, appClipLooked: false)
    }

    mutating func settleOutsideTheApp(_ record: InstallRecord) -> [Action] {
        if let matched = record.matched { return finish(deciding: matched, publish: false) }
        let message =
            setup.processKind == .appClip
            ? "An App Clip hands its link to the full app (AppClipHandoff); the install is decided there."
            : "An app extension does not decide the install; the app does."
        return [.log(.info, message)]
            + finish(deciding: .failed(DeepLinkError(.unsupported, message, backend: setup.backend)), publish: false)
    }

    /// Whether this launch looks for a certain link: a new install's (a first install, a
    /// reinstall, an existing user treated as new).
    var looksForCertainLinks: Bool {
        guard let launch else { return false }
        switch launch.kind {
        case .firstInstall, .reinstall: return true
        case .existingUser: return setup.existingUsers == .treatAsNew
        case .update, .relaunch: return false
        }
    }

    mutating func lookForCertainLink(record: InstallRecord, appClipLooked: Bool) -> [Action] {
        guard looksForCertainLinks else { return askForMatch(record: record) }
        if !appClipLooked, setup.hasAppClipHandoff {
            installPhase = .lookingAtAppClip
            return [.lookAtAppClip]
        }
        guard setup.hasPasteboardCheck else { return askForMatch(record: record) }
        if directLinkOpened {
            return [.skipPasteboard("A link opened the app; the pasteboard is not read.")] + askForMatch(record: record)
        }
        if !setup.deferredDeepLinks {
            // Its link could not be delivered: no alert for nothing.
            return [.skipPasteboard("Deferred deep links are off; the pasteboard is not read.")] + askForMatch(record: record)
        }
        installPhase = .readingPasteboard
        return [.readPasteboard]
    }

    mutating func appClipLooked(_ found: CertainLink?, record: InstallRecord) -> [Action] {
        guard case .lookingAtAppClip = installPhase else { return [] }
        if let kept = record.certainLink {
            // A paste while the App Clip's link was looked at: kept already, it wins.
            installPhase = .resolving(kept, pending: nil)
            return (found == nil ? [] : [.removeAppClipLink]) + [.resolveCertainLink(kept)]
        }
        guard let found else { return lookForCertainLink(record: record, appClipLooked: true) }
        // Kept in the record before it is removed from the App Group: whatever happens next, it
        // is neither lost nor taken twice.
        var kept = record
        kept.certainLink = found
        installPhase = .resolving(found, pending: nil)
        return [.save(kept), .removeAppClipLink, .resolveCertainLink(found)]
    }

    mutating func pasteboardRead(_ found: CertainLink?, record: InstallRecord) -> [Action] {
        guard case .readingPasteboard = installPhase else { return [] }
        // A paste while the pasteboard was read is kept already; it wins over nothing else.
        if let kept = record.certainLink {
            installPhase = .resolving(kept, pending: nil)
            return [.resolveCertainLink(kept)]
        }
        guard let found else { return askForMatch(record: record) }
        var kept = record
        kept.certainLink = found
        installPhase = .resolving(found, pending: nil)
        return [.save(kept), .resolveCertainLink(found)]
    }

    mutating func certainLinkResolved(_ link: DeepLink?, record: InstallRecord) -> [Action] {
        guard case .resolving(let certain, let pending) = installPhase else { return [] }
        guard let link else {
            // It cannot be delivered at all: the install goes on as if there were none.
            var forgotten = record
            forgotten.certainLink = nil
            let actions: [Action] = [.save(forgotten)]
            if let pending { return actions + apply(pending.result, late: pending.late, record: forgotten) }
            return actions + askForMatch(record: forgotten)
        }
        var report: InstallMatch?
        if case .matched(let match)? = pending?.result { report = match }
        return settle(certain, link: link, report: report, record: record)
    }

    /// Settles the install with its certain link: delivers it (once per install, by the same
    /// rules as a matched deferred link) without waiting for anything, then decides the outcome
    /// `.attributed` with the source's method and confidence 100, after the install report
    /// where the backend names the install only there and `report` is not its answer already.
    mutating func settle(_ certain: CertainLink, link: DeepLink, report: InstallMatch?, record: InstallRecord) -> [Action] {
        let attribution = InstallAttribution(
            installID: report?.attribution.installID, isAttributed: true, confidence: .init(score: 100),
            method: certain.source == .appClip ? .appClip : .pasteboard)
        let needsReport = setup.needsInstallReport && report == nil
        var settled = record
        settled.matched = .attributed(link, attribution)
        settled.lastFailure = nil
        settled.installReportPending = needsReport ? true : nil
        // The report counts as a launch's match: sent again on later launches, up to
        // ``Configuration/maximumInstallMatchLaunches`` in all.
        if needsReport { settled.matchLaunches += 1 }
        var actions: [Action] = []
        let deliverable = shouldDeliver(link, attribution: attribution, record: settled, log: &actions)
        if deliverable { settled.deferredLinkDelivered = true }
        // Saved before it is delivered: a crash after this point cannot deliver the link twice.
        actions.append(.save(settled))
        if deliverable { actions.append(.deliver(link, handedOver: certain.url)) }
        guard needsReport else {
            return actions + finish(deciding: .attributed(link, attribution), publish: true)
        }
        installPhase = .waitingForToken(.report(certain, link: link, attribution: attribution, decides: true))
        return actions + [.waitForToken]
    }

    mutating func askForMatch(record: InstallRecord) -> [Action] {
        var actions: [Action] = []
        var record = record
        if let rejected = record.rejectedCredentials {
            guard rejected != setup.credentials else {
                let failure =
                    record.lastFailure ?? DeepLinkError(.unauthorized, "The provider rejected the API key.", backend: setup.backend)
                return [
                    .log(
                        .warning,
                        "The provider rejected this API key for the install match on an earlier launch; the match waits for another key.")
                ]
                    + finish(deciding: .failed(failure), publish: false)
            }
            // Another key since the rejection: the match starts over.
            record.rejectedCredentials = nil
            record.matchLaunches = 0
            actions.append(.save(record))
        }
        // No fingerprint without the user's permission to track: a backend that only matches
        // is not asked; one that names the install in its report gets a report without signals.
        if !allowsFingerprint, !setup.needsInstallReport {
            record.matched = .organic(nil)
            return actions + [
                .log(
                    .info, "The user has not allowed tracking: no install match by fingerprint is asked for; the install counts as organic."
                ),
                .save(record),
            ] + finish(deciding: .organic(nil), publish: true)
        }
        guard record.matchLaunches < setup.maximumMatchLaunches else {
            let failure = record.lastFailure ?? DeepLinkError(.network, "The install match failed.", backend: setup.backend)
            return actions + [.log(.info, "The install match failed on \(record.matchLaunches) launches; not trying again.")]
                + finish(deciding: .failed(failure), publish: false)
        }
        installPhase = .waitingForToken(.match)
        return actions + [.waitForToken]
    }

    mutating func tokenSettled(_ token: String?, record: InstallRecord) -> [Action] {
        guard case .waitingForToken(let purpose) = installPhase else { return [] }
        installPhase = .sending(purpose, deadlinePassed: false)
        switch purpose {
        case .match:
            // Counted before it is sent: a crash mid-request also counts.
            var counted = record
            counted.matchLaunches += 1
            return [.save(counted), .send(certainLink: nil, token: token)]
        case .report(let certain, _, _, _):
            return [.send(certainLink: certain, token: token)]
        }
    }

    mutating func deadlinePassed() -> [Action] {
        guard case .sending(let purpose, deadlinePassed: false) = installPhase else { return [] }
        installPhase = .sending(purpose, deadlinePassed: true)
        switch purpose {
        case .match:
            return [
                .log(.info, "The install match timed out after \(setup.installMatchTimeout) s; a later answer will still be delivered.")
            ]
                + decide(.timedOut, publish: true)
        case .report(_, let link, let attribution, let decides):
            let actions: [Action] = [
                .log(.info, "The install report timed out after \(setup.installMatchTimeout) s; a later answer still names the install.")
            ]
            return actions + (decides ? decide(.attributed(link, attribution), publish: true) : [])
        }
    }

    mutating func answered(_ result: MatchResult, record: InstallRecord) -> [Action] {
        guard case .sending(let purpose, let late) = installPhase else { return [] }
        switch purpose {
        case .match:
            // A certain link arrived while the match was under way (a paste, a late pasteboard
            // read): it wins over what the match found, whose install id it keeps.
            if let certain = record.certainLink, record.matched == nil {
                installPhase = .resolving(certain, pending: Pending(result: result, late: late))
                return [.resolveCertainLink(certain)]
            }
            return apply(result, late: late, record: record)
        case .report(_, let link, var attribution, let decides):
            var actions = keepReported(result, record: record)
            if case .matched(let match) = result, let installID = match.attribution.installID { attribution.installID = installID }
            installPhase = .done
            if decides, !late { actions += decide(.attributed(link, attribution), publish: true) }
            return actions + [.addLateAppleAdsToken]
        }
    }

    /// The install id of a certain link's report, kept in the stored outcome.
    func keepReported(_ result: MatchResult, record: InstallRecord) -> [Action] {
        switch result {
        case .failed(let failure):
            return [
                .log(.warning, "The install report failed (sent again on the next launch): \(failure.description)"),
                .reportRejectedCredentials(failure, during: "Reporting the install"),
            ]
        case .matched(let match):
            var kept = record
            kept.installReportPending = nil
            if case .attributed(let link, var attribution) = kept.matched, let installID = match.attribution.installID {
                attribution.installID = installID
                kept.matched = .attributed(link, attribution)
            }
            return [.save(kept)]
        }
    }

    mutating func apply(_ result: MatchResult, late: Bool, record: InstallRecord) -> [Action] {
        var record = record
        installPhase = .done
        switch result {
        case .failed(let error) where error.code == .unsupported:
            record.matched = .organic(nil)
            return [.log(.info, "The backend has no install matching; the install counts as organic."), .save(record)]
                + decide(.organic(nil), publish: true)
        case .failed(let failure):
            record.lastFailure = failure
            if failure.code == .unauthorized { record.rejectedCredentials = setup.credentials }
            return [
                .log(.warning, "The install match failed: \(failure.description)"),
                .reportRejectedCredentials(failure, during: "Asking for the install match"),
                .save(record),
            ] + decide(.failed(failure), publish: true)
        case .matched(let match):
            var attribution = match.attribution
            attribution.isLate = late
            // A match is a match: attributed without a link when the provider sent none the
            // app can open, never organic.
            var outcome = attribution.isAttributed ? InstallOutcome.attributedWithoutLink(attribution) : .organic(attribution)
            var deferred: DeepLink?
            if attribution.isAttributed, var link = match.link {
                if link.origin != .deferred {
                    link.origin = .deferred
                    link.id = DeepLink.stableID(url: link.url, origin: .deferred, provider: link.provider)
                }
                outcome = .attributed(link, attribution)
                deferred = link
            }
            record.matched = outcome
            record.lastFailure = nil
            var actions: [Action] = []
            let deliverable = deferred.map { shouldDeliver($0, attribution: attribution, record: record, log: &actions) } ?? false
            if deliverable { record.deferredLinkDelivered = true }
            // Saved before it is delivered: a crash after this point cannot deliver the link twice.
            actions.append(.save(record))
            actions += decide(outcome, publish: true)
            if deliverable, let deferred { actions.append(.deliver(deferred, handedOver: deferred.url)) }
            return actions + [.addLateAppleAdsToken]
        }
    }

    // MARK: Offered links

    mutating func offered(_ certain: CertainLink, record: InstallRecord) -> [Action] {
        var record = record
        var actions: [Action] = []
        if record.matched == nil {
            guard record.certainLink == nil else {
                return [.log(.info, "This install already has its certain link; the pasted one is not taken."), .answerOffer(false)]
            }
            // Kept first: the run under way (or the next start(), or the next launch's) settles
            // the install with it instead of a fingerprint.
            record.certainLink = certain
            actions.append(.save(record))
            guard decidedAny else {
                return actions + [
                    .log(.info, "A certain link (\(certain.source.rawValue)) arrived before the install outcome; it is the deferred link."),
                    .answerOffer(true),
                ]
            }
        }
        guard !record.deferredLinkDelivered else {
            return actions + [
                .log(.info, "The deferred link was already delivered for this install; the pasted link is not delivered."),
                .answerOffer(false),
            ]
        }
        return actions + [.resolveOffered(certain)]
    }

    mutating func offeredResolved(_ certain: CertainLink, _ link: DeepLink?, record: InstallRecord) -> [Action] {
        guard let link, !record.deferredLinkDelivered else { return [.answerOffer(false)] }
        var delivered = record
        delivered.deferredLinkDelivered = true
        return [
            .save(delivered),
            .log(.info, "A certain link (\(certain.source.rawValue)) arrived after the install outcome; delivered as the deferred link."),
            .deliver(link, handedOver: certain.url),
            .answerOffer(true),
        ]
    }

    // MARK: Helpers

    /// Whether to deliver the deferred link, with a log line saying why not.
    func shouldDeliver(_ link: DeepLink, attribution: InstallAttribution, record: InstallRecord, log: inout [Action]) -> Bool {
        let reason: String
        if record.deferredLinkDelivered {
            reason = "The deferred link was already delivered for this install; not again."
        } else if launch?.isExistingUser == true, setup.existingUsers != .treatAsNew {
            reason = "The app was on this device before this backend; the match is reported in the outcome only."
        } else if !setup.deferredDeepLinks {
            reason = "Deferred deep links are off; the match is reported in the outcome only."
        } else if directLinkOpened {
            reason = "A direct link already opened the app; the deferred link is reported in the outcome only."
        } else if let score = attribution.confidence?.score, score < setup.minimumConfidence {
            reason = "The match's confidence \(score) is below \(setup.minimumConfidence); not delivered."
        } else {
            return true
        }
        log.append(.log(.info, reason))
        return false
    }

    mutating func decide(_ outcome: InstallOutcome, publish: Bool) -> [Action] {
        decidedAny = true
        return [.decide(outcome, publish: publish)]
    }

    mutating func finish(deciding outcome: InstallOutcome, publish: Bool) -> [Action] {
        installPhase = .done
        return decide(outcome, publish: publish)
    }
}
