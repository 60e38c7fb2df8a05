import Foundation

extension DeepLinkClient {
    /// Runs one backend call the way every call runs: with the client's context, retried by
    /// ``Configuration/retryPolicy``, and cut off at `timeout` on the client's clock (attempts
    /// and backoff included).
    func request<Value: Sendable>(
        _ what: String, timeout: TimeInterval, url: URL? = nil,
        _ call: @escaping @Sendable (BackendContext) async throws -> Value
    ) async throws -> Value {
        let context = await makeContext()
        let retryPolicy = configuration.retryPolicy
        let clock = self.clock
        let logger = self.logger
        let timeout = max(timeout, 0)
        let backendID = backend.id
        return try await withDeadline(
            clock.uptime + timeout, on: clock,
            timeoutError: {
                DeepLinkError(.timedOut, "\(what) took longer than \(timeout) s.", backend: backendID, url: url)
            },
            operation: {
                try await retryPolicy.run(clock: clock, logger: logger, what: what) { try await call(context) }
            })
    }
}
