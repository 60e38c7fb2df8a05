import Foundation

/// The conversation with the provider at debug level: one line per request the client's
/// backends send, with its method, host and path, the status (or the failure), the time it took
/// on the client's clock and the size of the answer. The query is not printed (it carries the
/// device's fingerprint), nor headers or bodies (they carry keys); the logger redacts the
/// backend's secrets from whatever is left. The client puts it in front of its transport only
/// when its log sink takes debug lines, so it costs nothing otherwise.
struct LoggingTransport: HTTPTransport {
    let base: any HTTPTransport
    let logger: LinkRelayLogger
    let clock: any LinkRelayClock

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let started = clock.uptime
        do {
            let response = try await base.send(request)
            logger.debug("\(Self.line(request)) → \(response.status) in \(milliseconds(since: started)) ms, \(response.body.count) bytes")
            return response
        } catch {
            let failure = DeepLinkError.wrapping(error, as: .network, "The request failed.")
            logger.debug("\(Self.line(request)) → failed (\(failure.code)) after \(milliseconds(since: started)) ms")
            throw error
        }
    }

    /// `GET go.acme.app/api/sdk/v1/resolve/spring?…`: what was asked, without the query's values.
    static func line(_ request: HTTPRequest) -> String {
        let query = request.url.query.map { $0.isEmpty ? "" : "?…" } ?? ""
        return "\(request.method.rawValue) \(request.url.host ?? "")\(request.url.path)\(query)"
    }

    private func milliseconds(since start: TimeInterval) -> Int {
        ((clock.uptime - start) * 1000).rounded().saturatingInt
    }
}
