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
        return try await withDeadline(
            deadline, on: clock,
            timeoutError: {
                DeepLinkError(.timedOut, "\(what) missed its deadline.", backend: backendID, url: url)
            },
            operation: {
                try await retryPolicy.run(clock: clock, logger: logger, what: what) { try await call(context) }
            })
    }
}
