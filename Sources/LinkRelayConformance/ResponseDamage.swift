import Foundation
import LinkRelay

/// Ways a provider's answer can arrive damaged.
enum ResponseDamage: String, CaseIterable, CustomStringConvertible {
    case truncated
    case numbersForStrings
    case nullEverywhere
    case nestedTenThousandDeep

    var description: String { rawValue }

    /// The error codes a damaged answer may give.
    var allowedErrors: Set<DeepLinkError.Code> {
        switch self {
        case .truncated, .nestedTenThousandDeep: [.decoding]
        // A value that is missing or of the wrong type: a decoding error, or "not found" where
        // the provider's own answer means that (no match, no link).
        case .numbersForStrings, .nullEverywhere: [.decoding, .notFound]
        }
    }

    /// Whether a result (never a delivered link) is an acceptable answer: only where the
    /// damaged body still reads as the provider's "nothing here".
    var mayGiveAResult: Bool {
        switch self {
        case .truncated, .nestedTenThousandDeep: false
        case .numbersForStrings, .nullEverywhere: true
        }
    }

    func apply(_ body: Data) -> Data {
        switch self {
        case .truncated:
            return Data(body.prefix(max(body.count / 2, 1)))
        case .numbersForStrings:
            return Self.mapStrings(body) { _ in nil }
        case .nullEverywhere:
            return Self.mapLeaves(body) { _ in NSNull() }
        case .nestedTenThousandDeep:
            return Data(("{\"data\":" + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}").utf8)
        }
    }

    /// `body` with every string `transform`ed; a `nil` from `transform` puts the number 12345
    /// in its place. A body that is not JSON is returned as it is.
    static func mapStrings(_ body: Data, _ transform: @escaping (String) -> String?) -> Data {
        mapLeaves(body) { leaf in
            guard let string = leaf as? String else { return leaf }
            return transform(string) ?? NSNumber(value: 12345)
        }
    }

    private static func mapLeaves(_ body: Data, _ transform: @escaping (Any) -> Any) -> Data {
        guard let json = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]) else { return body }
        func walk(_ value: Any) -> Any {
            if let object = value as? [String: Any] { return object.mapValues(walk) }
            if let array = value as? [Any] { return array.map(walk) }
            return transform(value)
        }
        return (try? JSONSerialization.data(withJSONObject: walk(json), options: [.fragmentsAllowed])) ?? body
    }
}

/// Passes requests to `base` and damages the answers of chosen paths.
final class MutatingTransport: HTTPTransport, Sendable {
    private let base: any HTTPTransport
    private let mutations = Locked<[String: @Sendable (Data) -> Data]>([:])

    init(base: any HTTPTransport) {
        self.base = base
    }

    /// Damages every later answer to `path` with `mutation`, replacing an earlier one.
    func mutate(path: String, with mutation: @escaping @Sendable (Data) -> Data) {
        mutations.withLock { $0[path] = mutation }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var response = try await base.send(request)
        if let mutation = mutations.withLock({ $0[request.url.path] }) {
            response = HTTPResponse(status: response.status, headers: response.headers, body: mutation(response.body))
        }
        return response
    }
}
