import LinkRelayServerCore
import LinkRelayServerStorage
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whether the server can listen where it is told to, asked before anything is written (a first
/// start's project and admin key): a port another process holds is one line naming the address,
/// not NIO's `bind(descriptor:ptr:bytes:): Address already in use (errno: 98)`.
package enum ListenCheck {
    /// Binds `host`:`port` (with `SO_REUSEADDR`, as the server does) and lets go again.
    /// - Throws: ``StartupError`` saying what is wrong with the address.
    package static func ensureAvailable(host: String, port: Int) async throws {
        do {
            let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port).get()
            try await channel.close()
        } catch {
            throw StartupError(describing: error, host: host, port: port)
        }
    }
}

extension ListenCheck {
    /// `error` as a ``StartupError`` naming the address when it is a failure to listen (NIO's
    /// `IOError`), else `error` itself.
    package static func described(_ error: any Error, host: String, port: Int) -> any Error {
        error is IOError || error is SocketAddressError ? StartupError(describing: error, host: host, port: port) : error
    }
}

/// A start that cannot go on: one sentence that says what is wrong and what to change.
package struct StartupError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    package let description: String

    /// A failure described by `description`.
    package init(_ description: String) {
        self.description = description
    }

    /// A failure to listen on `host`:`port`, in words.
    package init(describing error: any Error, host: String, port: Int) {
        let address = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        if let error = error as? IOError {
            switch error.errnoCode {
            case EADDRINUSE:
                description = "Cannot listen on \(address): the address is already in use (another server? choose another with --port)."
            case EACCES:
                description =
                    "Cannot listen on \(address): permission denied (ports below 1024 need privileges; choose another with --port)."
            case EADDRNOTAVAIL:
                description = "Cannot listen on \(address): this machine has no such address (choose another with --host)."
            default:
                description = "Cannot listen on \(address): \(String(cString: strerror(error.errnoCode)))."
            }
        } else if error is SocketAddressError {
            description =
                "Cannot listen on \(address): \(host) is not an address or a name this machine can resolve (choose another with --host)."
        } else {
            description = "Cannot listen on \(address): \(error)."
        }
    }
}
