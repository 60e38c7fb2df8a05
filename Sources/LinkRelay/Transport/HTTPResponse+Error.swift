import Foundation

extension HTTPResponse {
    /// The response's `Retry-After`, in seconds: delta-seconds or an HTTP date (relative to
    /// `now`). `nil` when absent or unreadable.
    @_spi(Backend) public func retryAfter(now: Date) -> TimeInterval? {
        guard let value = headers["Retry-After"]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            return nil
        }
        if let seconds = TimeInterval(value), seconds >= 0, seconds.isFinite { return seconds }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        return max(date.timeIntervalSince(now), 0)
    }

    /// The error for a non-2xx response: code ``DeepLinkError/Code-swift.struct/unauthorized``
    /// for 401 and 403 (the provider refused the key), otherwise
    /// ``DeepLinkError/Code-swift.struct/server(status:)``; with the status, the `Retry-After`
    /// delay, and `message`. The body is not copied into the message (it may echo secrets);
    /// adapters that read an error body add what they need.
    @_spi(Backend) public func serverError(
        _ message: String, backend: BackendID, url: URL? = nil, now: Date = Date()
    ) -> DeepLinkError {
        let code: DeepLinkError.Code = status == 401 || status == 403 ? .unauthorized : .server(status: status)
        return DeepLinkError(code, message, backend: backend, status: status, url: url, retryAfter: retryAfter(now: now))
    }
}
