import Foundation

/// Sends one HTTP request and returns the response: the only way a backend reaches the network.
///
/// ``URLSessionTransport`` is the default. Tests use `StubTransport` from LinkRelayTesting, and
/// the simulator plugs in a transport that answers in-process.
///
/// A transport returns every HTTP response, error statuses included; it throws only when there
/// is no response: a ``DeepLinkError`` with code `.network`, `.timedOut`, `.cancelled` or
/// `.responseTooLarge`.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the server's response, whatever its status.
    ///
    /// - Throws: A ``DeepLinkError`` (`.network`, `.timedOut`, `.cancelled` or
    ///   `.responseTooLarge`) only when there is no response to return.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}

/// An HTTP method.
public struct HTTPMethod: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The method's name, upper-cased.
    public let rawValue: String
    /// A method by name (upper-cased).
    public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
    /// A method from a literal: `let method: HTTPMethod = "OPTIONS"`.
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public var description: String { rawValue }

    /// `GET`.
    public static let get: HTTPMethod = "GET"
    /// `HEAD`.
    public static let head: HTTPMethod = "HEAD"
    /// `POST`.
    public static let post: HTTPMethod = "POST"
    /// `PUT`.
    public static let put: HTTPMethod = "PUT"
    /// `PATCH`.
    public static let patch: HTTPMethod = "PATCH"
    /// `DELETE`.
    public static let delete: HTTPMethod = "DELETE"
}

/// HTTP header fields: names compared case-insensitively, order kept.
public struct HTTPHeaders: Sendable, Hashable, Codable, ExpressibleByDictionaryLiteral, Sequence {
    /// The fields, in order.
    public private(set) var fields: [Field]

    /// One header field.
    public struct Field: Sendable, Hashable, Codable {
        /// The field's name, as written.
        public var name: String
        /// The field's value.
        public var value: String
        /// A field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Headers from name-value pairs, in order.
    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { Field(name: $0.0, value: $0.1) }
    }

    /// Headers from a literal: `["Content-Type": "application/json"]`.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value of the field `name`, or `nil`; setting replaces every field of that name
    /// (setting `nil` removes them).
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value }
        set {
            fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            if let newValue { fields.append(Field(name: name, value: newValue)) }
        }
    }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}

/// A request for an ``HTTPTransport``.
public struct HTTPRequest: Sendable, Hashable, Codable {
    /// The method.
    public var method: HTTPMethod
    /// The absolute URL, query included.
    public var url: URL
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body, if any.
    public var body: Data?

    /// A request.
    public init(method: HTTPMethod, url: URL, headers: HTTPHeaders = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// A response from an ``HTTPTransport``.
public struct HTTPResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// The header fields.
    public var headers: HTTPHeaders
    /// The body (empty when there is none).
    public var body: Data

    /// A response.
    public init(status: Int, headers: HTTPHeaders = [:], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// True for 2xx statuses.
    public var isSuccess: Bool { (200..<300).contains(status) }
}
