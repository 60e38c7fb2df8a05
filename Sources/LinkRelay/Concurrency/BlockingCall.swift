import Dispatch

/// Runs system calls that block their thread (`AAAttribution.attributionToken()`, Keychain
/// queries, the pasteboard's getters, which cannot return before the user answers "Allow
/// Paste") on a queue of LinkRelay's own, never on Swift's cooperative pool, whose handful of
/// threads a hanging call would hold for as long as it hangs. The caller's deadline
/// (``askSystem(for:within:on:_:)``) still bounds the wait: the call is left to finish on the
/// queue.
package enum BlockingCall {
    /// Concurrent: one hanging call does not hold up the next.
    private static let queue = DispatchQueue(label: "dev.linkrelay.blocking-calls", qos: .utility, attributes: .concurrent)

    /// The result of `call`, run on LinkRelay's queue.
    package static func run<Value: Sendable>(_ call: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try call() }) }
        }
    }

    /// The result of `call`, run on LinkRelay's queue.
    package static func run<Value: Sendable>(_ call: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: call()) }
        }
    }
}
