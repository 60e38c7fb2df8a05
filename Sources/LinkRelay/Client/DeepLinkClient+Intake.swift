import Foundation

extension DeepLinkClient {
    // MARK: - Links in

    /// Hands a URL to the client. Call it from `onOpenURL`, the AppDelegate or the
    /// SceneDelegate, from any thread, at any time, also before anybody listens.
    ///
    /// It never blocks: the URL goes into an inbox, its deadline
    /// (``Configuration/resolutionTimeout``) starts now, and the link is delivered through
    /// ``linkEvents()`` and ``deepLinks()``, in the order links were handed over.
    ///
    /// - Returns: whether the backend claims the URL. `false` lets you hand it to another
    ///   handler; such a URL is not delivered. Also `false` after ``shutdown()``.
    @discardableResult
    public nonisolated func handle(_ url: URL) -> Bool {
        // An ad re-engagement's parameter never reaches the parser, the provider or the app.
        let (url, reengaged) = AdReengagement.strip(configuration.adReengagementParameter, from: url)
        guard backend.canHandle(url) else {
            logger.debug("Not a link of this backend: \(url.absoluteString)")
            return false
        }
        directLinkReceived.withLock { $0 = true }
        if reengaged {
            adReengagements.withLock {
                $0.append(url)
                // Kept only until delivered; a link dropped on the way (a duplicate) leaves its
                // entry, so at most a few are kept.
                if $0.count > 16 { $0.removeFirst($0.count - 16) }
            }
        }
        guard enqueue(.link(url, arrivedAt: clock.uptime)) else {
            logger.warning("The client is shut down; the link was not taken: \(url.absoluteString)")
            return false
        }
        return true
    }

    /// Queues an inbox item, starting a drain when the inbox was idle; `false` after shutdown.
    private nonisolated func enqueue(_ item: InboxItem) -> Bool {
        switch inbox.put(item) {
        case .closed:
            return false
        case .queued:
            return true
        case .startDrain:
            Task { await self.drainInbox() }
            return true
        }
    }

    /// Moves everything in the inbox into the intake, a batch at a time, starting resolutions
    /// and delivering what is ready after each batch.
    private func drainInbox() {
        while true {
            let batch = inbox.takeAll()
            if batch.isEmpty { return }
            for item in batch { admit(item) }
            for url in intake.trim(to: configuration.linkBufferLimit) { linkDrops.note(url, logger: logger) }
            advanceIntake()
        }
    }

    /// Resumes the barriers among items that will not be processed.
    nonisolated static func release(_ items: [InboxItem]) {
        for case .barrier(let continuation) in items { continuation.resume() }
    }

    /// Returns once every URL handed over before the call has been delivered (or held, refused
    /// or dropped as a duplicate). For tests and the demo.
    nonisolated func waitUntilIdle() async {
        await withCheckedContinuation { continuation in
            if !enqueue(.barrier(continuation)) { continuation.resume() }
        }
    }

    /// Takes one inbox item into the intake: a duplicate is dropped, a link answered on the
    /// device or not parseable is finished at once, any other link waits for the provider.
    private func admit(_ item: InboxItem) {
        switch item {
        case .barrier(let continuation):
            intake.enqueue(barrier: continuation)
        case .link(let url, let arrivedAt):
            guard intake.admit(url, at: arrivedAt) else {
                logger.debug("Same link again within \(configuration.duplicateWindow) s; delivered once: \(url.absoluteString)")
                return
            }
            // In an App Clip: kept for the full app that replaces it.
            saveForFullApp(url)
            let parsed: ParsedLink
            do {
                parsed = try parse(url)
            } catch {
                intake.enqueue(
                    .failure(
                        DeepLinkError.wrapping(error, as: .invalidURL, "The link could not be parsed.", backend: backend.id, url: url),
                        url: url))
                return
            }
            if let onDevice = backend.resolveOnDevice(parsed) {
                // Answered without the provider: no context, no deadline, no task. With nothing
                // ahead of it in the intake, arrival order allows delivering it right away.
                if intake.count == 0 {
                    deliver(gated(onDevice), handedOver: url)
                } else {
                    intake.enqueue(.link(gated(onDevice), handedOver: url))
                }
                return
            }
            intake.enqueue(url, parsed: parsed, deadline: arrivedAt + configuration.resolutionTimeout)
        }
    }

    /// Starts the resolutions that have a free slot, then delivers every link, failure and
    /// barrier that is ready, in arrival order.
    func advanceIntake() {
        while true {
            let starts = intake.startable()
            if starts.isEmpty { break }
            for start in starts {
                if clock.uptime >= start.deadline {
                    // Its deadline passed while it waited for a slot: the provider is not asked.
                    logger.info(
                        "The link's deadline passed while it waited for a free slot; parsed on the device: \(start.url.absoluteString)")
                    let link = localLink(for: start.url, parsed: start.parsed, reason: .timedOut)
                    intake.finish(start.ticket, .link(link, handedOver: start.url))
                } else {
                    resolutions[start.ticket] = Task { await self.resolveQueued(start) }
                }
            }
        }
        for action in intake.ready() {
            switch action {
            case .deliver(.link(let link, let url)): deliver(link, handedOver: url)
            case .deliver(.failure(let error, let url)): publishFailure(error, url: url)
            case .release(let waiter): waiter.resume()
            }
        }
    }

    /// Resolves one link of the intake by its deadline and hands the result back to it.
    private func resolveQueued(_ start: LinkIntake<CheckedContinuation<Void, Never>>.Start) async {
        let finished: LinkIntake<CheckedContinuation<Void, Never>>.Finished
        do {
            finished = .link(
                try await resolveWithFallback(start.url, parsed: start.parsed, deadline: start.deadline), handedOver: start.url)
        } catch {
            finished = .failure(
                DeepLinkError.wrapping(error, as: .cancelled, "Resolving the link was cancelled.", backend: backend.id, url: start.url),
                url: start.url)
        }
        // Gone at shutdown: nothing more is delivered.
        guard resolutions.removeValue(forKey: start.ticket) != nil else { return }
        intake.finish(start.ticket, finished)
        advanceIntake()
    }

    // MARK: - Explicit resolution

    /// Resolves a URL as ``handle(_:)`` would (the same deadline, local fallback and destination
    /// policy) and returns the link instead of publishing it. Authentication gating does not
    /// apply: ``DeepLink/requiresAuthentication`` tells you.
    ///
    /// - Throws: ``DeepLinkError`` `.unsupported` for a URL the backend does not claim,
    ///   `.invalidURL` for one that cannot be parsed, `.rejected` for a destination that is not
    ///   allowed, `.shutdown` after ``shutdown()``.
    public func resolve(_ url: URL) async throws -> DeepLink {
        guard !isShutDown else { throw shutdownError() }
        guard backend.canHandle(url) else {
            throw DeepLinkError(.unsupported, "The backend does not handle this link.", backend: backend.id, url: url)
        }
        let parsed = try parse(url)
        let link: DeepLink
        if let onDevice = backend.resolveOnDevice(parsed) {
            link = gated(onDevice)
        } else {
            link = try await resolveWithFallback(url, parsed: parsed, deadline: clock.uptime + configuration.resolutionTimeout)
        }
        if let refusal = policy.refusal(for: link, handedOver: url) { throw refusal }
        return link
    }

    /// The link parsed on the device; an unparseable link never reaches the provider.
    private func parse(_ url: URL) throws -> ParsedLink {
        do {
            return try LinkParser.parse(url)
        } catch var error as DeepLinkError {
            error.backend = error.backend ?? backend.id
            throw error
        }
    }

    /// The backend's link, or the adapter's local link when the backend fails, does not know
    /// the link, or misses `deadline`. Throws only when the calling task is cancelled.
    private func resolveWithFallback(_ url: URL, parsed: ParsedLink, deadline: TimeInterval) async throws -> DeepLink {
        let backend = self.backend
        do {
            let link = try await request("Resolving the link", deadline: deadline, url: url) { context in
                try await backend.resolve(parsed, context: context)
            }
            return gated(link)
        } catch {
            if error is CancellationError || Task.isCancelled { throw CancellationError() }
            let failure = DeepLinkError.wrapping(
                error, as: .network, "The provider could not resolve the link.", backend: backend.id, url: url
            )
            .redacted(by: redactor)
            let reason: DeepLink.LocalReason =
                switch failure.code {
                case .timedOut: .timedOut
                case .notFound: .notFound
                default: .failed(failure)
                }
            logger.info("Delivering the locally parsed link (\(reason)): \(url.absoluteString)")
            return localLink(for: url, parsed: parsed, reason: reason)
        }
    }

    /// The adapter's link for `url` without its provider, gated by the app's rules.
    private func localLink(for url: URL, parsed: ParsedLink, reason: DeepLink.LocalReason) -> DeepLink {
        gated(backend.localLink(for: url, parsed: parsed, reason: reason))
    }

    /// `link`, marked as needing a signed-in user when the app's rules say so.
    private func gated(_ link: DeepLink) -> DeepLink {
        guard !link.requiresAuthentication, isGatedPath(link) else { return link }
        var gated = link
        gated.requiresAuthentication = true
        return gated
    }

    /// Whether the app's rule gates the link, or the link's path, or the path of an app-scheme
    /// destination (where providers such as LimeLink put the route), is gated.
    private func isGatedPath(_ link: DeepLink) -> Bool {
        if let rule = configuration.authenticationRule, rule(link) { return true }
        guard !signInPaths.isEmpty else { return false }
        var candidates = [link.pathSegments]
        if let destination = link.destination, let scheme = destination.scheme?.lowercased(),
            backend.appSchemes.contains(scheme), let parsed = try? LinkParser.parse(destination)
        {
            candidates.append(parsed.pathSegments)
        }
        return candidates.contains { segments in
            guard let first = segments.first else { return false }
            return signInPaths.contains(first) || signInPaths.contains(segments.joined(separator: "/"))
        }
    }
}
