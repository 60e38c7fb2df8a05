import Foundation

extension DeepLinkClient {
    /// Runs one backend call the way every call runs: with the client's context, retried by
    /// ``Configuration/retryPolicy``, and cut off at `timeout` from now on the client's clock
    /// (attempts and backoff included).
    func request<Value: Sendable>(
        _ what: String, timeout: TimeInterval, url: URL? = nil,
        _ call: @escaping @Sendable (BackendContext) async throws -> Value
    ) async throws -> Value {
        try await request(what, deadline: clock.uptime + timeout.clampedDuration, url: url, call)
    }

    /// ``request(_:timeout:url:_:)`` cut off at `deadline` (an uptime on the client's clock),
    /// such as a link's arrival plus its timeout.
    func request<Value: Sendable>(
        _ what: String, deadline: TimeInterval, url: URL? = nil,
        _ call: @escaping @Sendable (BackendContext) async throws -> Value
    ) async throws -> Value {
        let context = await makeContext()
        let retryPolicy = configuration.retryPolicy
        let clock = self.clock
        let logger = self.logger
        let backendID = backend.id
        do {
            return try await withDeadline(
                deadline, on: clock,
                timeoutError: {
                    DeepLinkError(.timedOut, "\(what) missed its deadline.", backend: backendID, url: url)
                },
                operation: {
                    try await retryPolicy.run(clock: clock, logger: logger, what: what) { try await call(context) }
                })
        } catch {
            reportIfCredentialsRejected(error, during: what)
            throw error
        }
    }

    /// When a provider answered 401 or 403, it rejected the API key (or the key's
    /// permissions): whatever the call (the install match, a resolution, events, link
    /// creation, an event report), the app hears it once per client as a `.failure` event that
    /// says so, and the log as a warning. The call's own error goes its usual way too.
    func reportIfCredentialsRejected(_ error: any Error, during what: String) {
        guard let error = error as? DeepLinkError, let status = error.status ?? error.code.serverStatus, status == 401 || status == 403,
            !session.credentialsRejectionReported
        else { return }
        session.credentialsRejectionReported = true
        let provider = error.backend ?? backend.id
        let failure = DeepLinkError(
            .unauthorized,
            "The provider rejected the API key: \(provider) answered \(status) while \(what.prefix(1).lowercased() + what.dropFirst()). "
                + "Check the key (and its permissions) in the backend's configuration.",
            backend: provider, status: status, url: error.url
        ).redacted(by: redactor)
        logger.warning(failure.message)
        publish(.failure(failure))
    }
}
