import Hummingbird
import LinkRelayServerCore

extension ClickLimiter {
    /// `response`, with `X-LinkRelay-Click-Recorded: false` when its click was not stored.
    static func marked(_ response: Response, recorded: Bool) -> Response {
        guard !recorded else { return response }
        var response = response
        response.headers[.init(headerName)!] = "false"
        return response
    }
}
