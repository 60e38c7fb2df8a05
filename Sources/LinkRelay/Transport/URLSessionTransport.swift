import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default ``HTTPTransport``: URLSession, on Apple platforms and on Linux.
///
/// The response body is streamed and refused as soon as it grows past
/// ``Configuration/maximumResponseSize``, and the response's header fields past
/// ``Configuration/maximumHeaderSize``, so a hostile or broken server cannot make the app hold
/// an unbounded response in memory. A refused or cancelled request returns at once, whatever the
/// URL loading system is still doing with the connection.
///
/// On Linux, URLSession (swift-corelibs-foundation) cancels a task asynchronously, on the queue
/// that is reading the socket: on loopback, where a server can push about 1 GB/s, tens of MB
/// more arrive before the connection closes (and are dropped as they arrive). The request
/// itself has already returned by then.
///
/// Deadlines are not this transport's job: the client races every request against its own
/// clock. The session's own timeout is only a backstop.
public final class URLSessionTransport: HTTPTransport {
    /// Settings of a ``URLSessionTransport``.
    public struct Configuration: Sendable {
        /// Larger responses are refused with ``DeepLinkError/Code-swift.struct/responseTooLarge``.
        /// A negative size counts as 0. Default 1 MiB.
        public var maximumResponseSize: Int = 1 << 20
        /// Responses whose header fields (names and values, in UTF-8) add up to more are
        /// refused with ``DeepLinkError/Code-swift.struct/responseTooLarge``. A negative size
        /// counts as 0. Default 64 KiB; no provider sends more than a few hundred bytes.
        public var maximumHeaderSize: Int = 64 << 10
        /// URLSession's own request timeout, a backstop behind the client's deadlines. Clamped
        /// to 1 s…7 days (NaN is the default): URLSession counts whole seconds on Linux, and
        /// `.infinity` is not a timeout it can keep. Default 60 s.
        public var backstopTimeout: TimeInterval = 60

        /// The settings as the transport uses them.
        func clamped() -> Configuration {
            let backstop = backstopTimeout.isNaN ? 60 : min(max(backstopTimeout, 1), 7 * 86_400)
            return Configuration(
                maximumResponseSize: max(maximumResponseSize, 0), maximumHeaderSize: max(maximumHeaderSize, 0),
                backstopTimeout: backstop)
        }

        /// Settings; the defaults are listed on each field.
        public init(maximumResponseSize: Int = 1 << 20, maximumHeaderSize: Int = 64 << 10, backstopTimeout: TimeInterval = 60) {
            self.maximumResponseSize = maximumResponseSize
            self.maximumHeaderSize = maximumHeaderSize
            self.backstopTimeout = backstopTimeout
        }
    }

    /// The transport's settings, clamped as each field documents.
    public let configuration: Configuration
    private let session: URLSession
    private let delegate: SessionDelegate

    /// A transport with its own ephemeral session (no cookies, no cache on disk).
    public init(configuration: Configuration = Configuration()) {
        let configuration = configuration.clamped()
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.timeoutIntervalForRequest = configuration.backstopTimeout
        sessionConfiguration.httpCookieStorage = nil
        sessionConfiguration.urlCache = nil
        self.delegate = SessionDelegate(
            maximumResponseSize: configuration.maximumResponseSize, maximumHeaderSize: configuration.maximumHeaderSize)
        #if canImport(FoundationNetworking)
            // Linux's URLSession hands every piece of the body to the delegate queue and reads on
            // without waiting: with its own queue behind, a fast server filled memory with
            // pieces nobody had looked at yet (1.2 GB seen for a 1 MiB limit). Run inline, the
            // delegate sees each piece as it is read and drops what comes after a refusal.
            let delegateQueue: OperationQueue = InlineOperationQueue()
        #else
            let delegateQueue: OperationQueue? = nil
        #endif
        self.session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: delegateQueue)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    static func classify(_ error: any Error, responseStarted: Bool = false) -> DeepLinkError {
        SessionDelegate.classify(error, responseStarted: responseStarted)
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.httpBody = request.body
        for field in request.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        let task = session.dataTask(with: urlRequest)
        let delegate = self.delegate
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                delegate.register(task, continuation: continuation)
                task.resume()
            }
        } onCancel: {
            // The caller gets its answer now; the session stops the transfer when it gets to it.
            delegate.cancel(task)
        }
    }
}

#if canImport(FoundationNetworking)
    /// An operation queue that runs blocks at once, on the caller's thread: on Linux that is the
    /// session's own queue, which reads the socket, so the delegate keeps pace with the reads.
    /// The delegate must never wait on the session from there (``SessionDelegate`` stops tasks
    /// from another queue).
    final class InlineOperationQueue: OperationQueue, @unchecked Sendable {
        override func addOperation(_ block: @escaping @Sendable () -> Void) {
            block()
        }
    }
#endif

/// Collects each task's response and body, enforcing the size bound as data arrives.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Pending: Sendable {
        var continuation: CheckedContinuation<HTTPResponse, any Error>
        var status = 0
        var headers = HTTPHeaders()
        var body = Data()
    }

    private let maximumResponseSize: Int
    private let maximumHeaderSize: Int
    private let pending = Locked([Int: Pending]())
    /// Tasks cancelled before they were registered (cancellation can win that race).
    private let cancelledEarly = Locked(Set<Int>())

    init(maximumResponseSize: Int, maximumHeaderSize: Int = 64 << 10) {
        self.maximumResponseSize = maximumResponseSize
        self.maximumHeaderSize = maximumHeaderSize
    }

    func register(_ task: URLSessionTask, continuation: CheckedContinuation<HTTPResponse, any Error>) {
        let cancelled = cancelledEarly.withLock { $0.remove(task.taskIdentifier) != nil }
        if cancelled {
            continuation.resume(throwing: DeepLinkError(.cancelled, "The request was cancelled."))
            return
        }
        pending.withLock { $0[task.taskIdentifier] = Pending(continuation: continuation) }
    }

    /// Answers the caller with `.cancelled` at once, then asks the session to stop the task.
    func cancel(_ task: URLSessionTask) {
        let entry = pending.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        if let entry {
            entry.continuation.resume(throwing: DeepLinkError(.cancelled, "The request was cancelled."))
        } else if task.state == .suspended {
            // Not registered yet (a task is registered, then resumed): `register` answers it.
            // A task that already finished is not remembered.
            cancelledEarly.withLock { _ = $0.insert(task.taskIdentifier) }
        }
        stop(task)
    }

    /// Asks the session to stop `task`, from another queue: `cancel()` waits for the session's
    /// own queue, where the delegate may be running (on Linux), and the caller should not wait.
    private func stop(_ task: URLSessionTask) {
        DispatchQueue.global().async { task.cancel() }
    }

    private func complete(_ task: URLSessionTask, with result: Result<HTTPResponse, any Error>) {
        let entry = pending.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        entry?.continuation.resume(with: result)
    }

    private func tooLarge(_ task: URLSessionTask, _ message: String? = nil) {
        let message = message ?? "The response is larger than \(maximumResponseSize) bytes and was refused."
        complete(task, with: .failure(DeepLinkError(.responseTooLarge, message)))
        stop(task)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        let http = response as? HTTPURLResponse
        var headers = HTTPHeaders()
        var headerSize = 0
        for (name, value) in http?.allHeaderFields ?? [:] {
            let name = String(describing: name)
            let value = String(describing: value)
            headerSize += name.utf8.count + value.utf8.count
            guard headerSize <= maximumHeaderSize else {
                tooLarge(dataTask, "The response's header fields are larger than \(maximumHeaderSize) bytes and were refused.")
                completionHandler(.cancel)
                return
            }
            headers[name] = value
        }
        let status = http?.statusCode ?? 0
        pending.withLock { pending in
            pending[dataTask.taskIdentifier]?.status = status
            pending[dataTask.taskIdentifier]?.headers = headers
        }
        if response.expectedContentLength > Int64(maximumResponseSize) {
            tooLarge(dataTask)
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let exceeded = pending.withLock { pending -> Bool in
            guard var entry = pending[dataTask.taskIdentifier] else { return false }
            guard entry.body.count + data.count <= maximumResponseSize else { return true }
            entry.body.append(data)
            pending[dataTask.taskIdentifier] = entry
            return false
        }
        if exceeded { tooLarge(dataTask) }
    }

    /// Redirects are followed only within the same origin (or from `http` to `https` on the same
    /// host): never to another host, never down to `http`. An API request carries keys; a
    /// redirect must not carry them elsewhere. A redirect not followed is returned as the 3xx
    /// response it is.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(Self.follows(from: task.originalRequest?.url, to: request.url) ? request : nil)
    }

    static func follows(from original: URL?, to target: URL?) -> Bool {
        guard let original, let target, let from = original.scheme?.lowercased(), let to = target.scheme?.lowercased(),
            let host = original.host?.lowercased(), target.host?.lowercased() == host
        else { return false }
        func port(_ url: URL, _ scheme: String) -> Int? { url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil) }
        if from == to { return port(original, from) == port(target, to) }
        return from == "http" && to == "https"
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error {
            // A connection that breaks after the status line arrived is reported by Linux's
            // URLSession as an unknown error (-1); say what happened.
            let responseStarted = pending.withLock { ($0[task.taskIdentifier]?.status ?? 0) != 0 }
            complete(task, with: .failure(Self.classify(error, responseStarted: responseStarted)))
            return
        }
        let entry = pending.withLock { $0[task.taskIdentifier] }
        guard let entry else { return }
        complete(task, with: .success(HTTPResponse(status: entry.status, headers: entry.headers, body: entry.body)))
    }

    /// Whether libcurl (under Linux's URLSession) refused a header block past its own bound
    /// (300 KB), which reaches us as an unknown error with libcurl's text.
    static func isHeaderBlockTooLarge(_ error: any Error) -> Bool {
        let nsError = error as NSError
        let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError
        return [nsError, underlying].contains { error in
            (error?.userInfo[NSLocalizedDescriptionKey] as? String)?.hasPrefix("Too large response headers") == true
        }
    }

    /// URL loading errors as ``DeepLinkError``s. The message names the condition only: the
    /// system's own text can carry the request URL, and with it a key in a query.
    static func classify(_ error: any Error, responseStarted: Bool = false) -> DeepLinkError {
        // `URLError.Code(rawValue:)` is failable here and not on Apple platforms, where a `??`
        // after it is a warning (an error in a build with warnings as errors).
        #if canImport(Darwin)
            let fromNSError = URLError.Code(rawValue: (error as NSError).code)
        #else
            let fromNSError = URLError.Code(rawValue: (error as NSError).code) ?? .unknown
        #endif
        let code = (error as? URLError)?.code ?? fromNSError
        if code == .unknown, Self.isHeaderBlockTooLarge(error) {
            return DeepLinkError(
                .responseTooLarge, "The response's header fields are larger than the URL loading system accepts and were refused.",
                underlying: error)
        }
        switch code {
        case .cancelled:
            return DeepLinkError(.cancelled, "The request was cancelled.", underlying: error)
        case .timedOut:
            return DeepLinkError(.timedOut, "The request timed out.", underlying: error)
        case .cannotConnectToHost:
            return DeepLinkError(.network, "The server refused the connection.", underlying: error)
        case .cannotFindHost, .dnsLookupFailed:
            return DeepLinkError(.network, "The server's host name could not be resolved.", underlying: error)
        case .notConnectedToInternet:
            return DeepLinkError(.network, "The device is offline.", underlying: error)
        case .networkConnectionLost:
            return DeepLinkError(.network, "The connection was lost before the response was complete.", underlying: error)
        case .unknown where responseStarted:
            return DeepLinkError(.network, "The connection was lost before the response was complete.", underlying: error)
        case .badServerResponse:
            return DeepLinkError(.network, "The server sent a response that is not valid HTTP.", underlying: error)
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot:
            return DeepLinkError(.network, "The secure connection to the server failed.", underlying: error)
        default:
            return DeepLinkError(.network, "The request failed (URL error \(code.rawValue)).", underlying: error)
        }
    }
}
