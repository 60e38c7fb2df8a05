import Foundation

/// Every error LinkRelay reports: one struct with a ``Code``, a message for people, and the
/// context that explains it.
///
/// Switch on ``code``, not on the message:
///
/// ```swift
/// do {
///     let link = try await client.resolve(url)
/// } catch let error as DeepLinkError where error.code == .invalidURL {
///     showError("That link is not valid")
/// }
/// ```
///
/// A missing install match is not an error: it is ``InstallOutcome/organic(_:)``.
/// No message ever contains an API key or another secret: the client redacts every error a
/// backend reports before it reaches you.
///
/// Equality, hashing and coding use the code, message, backend, status and URL; the
/// ``underlying`` error is kept for debugging only.
public struct DeepLinkError: Error, Sendable, Hashable, Codable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added; compare with `==` and keep a
    /// `default` branch when you `switch`.
    public struct Code: Sendable, Hashable, Codable, CustomStringConvertible {
        private enum Base: Sendable, Hashable, Codable {
            case notStarted, invalidConfiguration, invalidArgument, invalidURL, unsupported
            case network, timedOut, server(Int), notFound, decoding, responseTooLarge
            case rejected, cancelled, shutdown, storage, unauthorized
        }

        private let base: Base

        /// The client was used in a way that needs `start()` first.
        public static let notStarted = Code(base: .notStarted)
        /// A configuration value is invalid; the message names the field.
        public static let invalidConfiguration = Code(base: .invalidConfiguration)
        /// An argument to a call is invalid; the message says which.
        public static let invalidArgument = Code(base: .invalidArgument)
        /// The URL cannot be parsed, or is not a link the backend handles.
        public static let invalidURL = Code(base: .invalidURL)
        /// The backend does not offer this feature.
        public static let unsupported = Code(base: .unsupported)
        /// The request did not reach the server, or the connection broke.
        public static let network = Code(base: .network)
        /// A deadline passed.
        public static let timedOut = Code(base: .timedOut)
        /// The server answered with an error status (see ``DeepLinkError/status``).
        public static func server(status: Int) -> Code { Code(base: .server(status)) }
        /// The backend does not know this link.
        public static let notFound = Code(base: .notFound)
        /// The provider refused the credentials: it answered 401 or 403 (``DeepLinkError/status``
        /// says which). Check the API key and its permissions in the backend's configuration;
        /// trying again with the same key does not help, so it is never retried.
        public static let unauthorized = Code(base: .unauthorized)
        /// The response could not be decoded.
        public static let decoding = Code(base: .decoding)
        /// The response was larger than the transport accepts.
        public static let responseTooLarge = Code(base: .responseTooLarge)
        /// The link was refused by the client's policy (for example a destination scheme that is
        /// not allowed).
        public static let rejected = Code(base: .rejected)
        /// The work was cancelled.
        public static let cancelled = Code(base: .cancelled)
        /// The client was shut down (``DeepLinkClient/shutdown()``): nothing more is sent.
        public static let shutdown = Code(base: .shutdown)
        /// A value could not be written to the ``PersistentStore`` (a full disk, a folder that
        /// is not writable). Nothing was lost that the message does not name.
        public static let storage = Code(base: .storage)

        /// The HTTP status, for ``server(status:)`` codes.
        public var serverStatus: Int? {
            if case .server(let status) = base { return status }
            return nil
        }

        public var description: String {
            switch base {
            case .notStarted: "notStarted"
            case .invalidConfiguration: "invalidConfiguration"
            case .invalidArgument: "invalidArgument"
            case .invalidURL: "invalidURL"
            case .unsupported: "unsupported"
            case .network: "network"
            case .timedOut: "timedOut"
            case .server(let status): "server(\(status))"
            case .notFound: "notFound"
            case .decoding: "decoding"
            case .responseTooLarge: "responseTooLarge"
            case .rejected: "rejected"
            case .cancelled: "cancelled"
            case .shutdown: "shutdown"
            case .storage: "storage"
            case .unauthorized: "unauthorized"
            }
        }
    }

    /// What kind of failure this is.
    public var code: Code
    /// A sentence for people: what failed and, where it helps, what to do.
    public var message: String
    /// The backend that reported it, if any.
    public var backend: BackendID?
    /// The HTTP status of the response, where there was one.
    public var status: Int?
    /// The link the failure concerns, where there is one.
    public var url: URL?
    /// How long the server asked to wait before trying again (`Retry-After`), in seconds.
    /// Not coded, not compared.
    public var retryAfter: TimeInterval?
    /// The error that caused this one, for debugging. Not coded, not compared.
    public var underlying: (any Error & Sendable)?

    /// An error with `code` and a human-readable `message` (which must not contain secrets).
    public init(
        _ code: Code,
        _ message: String,
        backend: BackendID? = nil,
        status: Int? = nil,
        url: URL? = nil,
        retryAfter: TimeInterval? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.code = code
        self.message = message
        self.backend = backend
        self.status = status ?? code.serverStatus
        self.url = url
        self.retryAfter = retryAfter
        self.underlying = underlying
    }

    /// Whether trying again may help: transport failures and timeouts, 5xx, and 429.
    /// Everything else (4xx, decoding, invalid input, unsupported, rejected, cancelled) is final.
    public var isRetryable: Bool {
        if code == .network || code == .timedOut { return true }
        guard let status = code.serverStatus else { return false }
        return status == 429 || (500...599).contains(status)
    }

    public var description: String {
        var text = "DeepLinkError.\(code)"
        if let backend { text += " [\(backend)]" }
        text += ": \(message)"
        if let status, code.serverStatus == nil { text += " (HTTP \(status))" }
        return text
    }

    /// Wraps any error as a `DeepLinkError`: a `DeepLinkError` is returned as it is,
    /// cancellation becomes ``Code/cancelled``, anything else becomes `fallback` with the error
    /// kept as ``underlying`` (its text is not copied into the message, as it may hold secrets).
    @_spi(Backend) public static func wrapping(
        _ error: any Error, as fallback: Code, _ message: String, backend: BackendID? = nil,
        url: URL? = nil
    ) -> DeepLinkError {
        if let error = error as? DeepLinkError { return error }
        if error is CancellationError {
            return DeepLinkError(.cancelled, "The operation was cancelled.", backend: backend, url: url)
        }
        return DeepLinkError(fallback, message, backend: backend, url: url, underlying: error)
    }

    private enum CodingKeys: String, CodingKey {
        case code, message, backend, status, url
    }

    public static func == (lhs: DeepLinkError, rhs: DeepLinkError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.backend == rhs.backend
            && lhs.status == rhs.status && lhs.url == rhs.url
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(backend)
        hasher.combine(status)
        hasher.combine(url)
    }
}
