import Foundation
import Hummingbird
import LinkRelayServerCore
import LinkRelayServerStorage
import NIOCore

/// The HTTP API's OpenAPI 3.1 description (`openapi.json`, a resource of this module), served
/// at `GET /openapi.json` without a key, for a client generator, a gateway or a fuzzer. Its
/// paths and methods are the router's routes (a test compares them); the dashboard's HTML
/// pages are not part of it.
package enum APIDescription {
    /// The document's bytes as shipped, or why they cannot be read.
    package static let shipped: Result<[UInt8], APIDescriptionMissing> = {
        guard case .success(let url) = ServerResources.api.url("openapi", withExtension: "json"), let data = try? Data(contentsOf: url)
        else {
            return .failure(APIDescriptionMissing())
        }
        return .success(Array(data))
    }()

    /// `GET /openapi.json` on `router` (before the redirect's `/{code}`, which would take it).
    static func register(on router: Router<ServerContext>) {
        router.get("openapi.json") { _, _ -> Response in
            switch shipped {
            case .success(let bytes):
                return Response(
                    status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            case .failure(let error):
                throw APIError(.serviceUnavailable, error.description)
            }
        }
    }
}

/// The description is not beside the server (a build that left out its resources).
package struct APIDescriptionMissing: Error, CustomStringConvertible {
    package var description: String { "The API description (openapi.json) is not installed with this server." }
}
