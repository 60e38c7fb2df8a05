import Hummingbird
import LinkRelayServerCore
import LinkRelayServerStorage

extension ClientAddress {
    /// `request`'s `X-Forwarded-For` fields, joined; `nil` without one.
    static func forwardedFor(_ request: Request) -> String? {
        let forwarded = request.headers.filter { $0.name.canonicalName == "x-forwarded-for" }.map(\.value).joined(separator: ",")
        return forwarded.isEmpty ? nil : forwarded
    }
}
