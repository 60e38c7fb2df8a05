import LinkRelayServerCore
import LinkRelayServerStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's open-file limit, which bounds its connections: every connection is a file, and
/// so are the database's files, its journal and the log. With the common soft limit of 1,024,
/// about 1,100 idle sockets took the server off the air (accept failed, and SQLite could open
/// nothing). At start the server raises its soft limit to the hard one (at most 1,048,576) and
/// keeps at most ``connectionLimit(for:metrics:)`` connections open, so files are always left for
/// the rest (a hard limit of 1,024 is common: a container's default, systemd's `LimitNOFILE`).
package enum OpenFileLimit {
    /// Files kept for what is not a connection: the database (SQLite's file, WAL and shared
    /// memory, three connections), PostgreSQL's pool, the log, the thread pools.
    package static let reserved = 128

    #if os(Linux)
        private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        private static let resource = RLIMIT_NOFILE
    #endif

    /// Raises the soft limit to the hard one (bounded); returns the soft limit in force after.
    @discardableResult
    package static func raise() -> Int {
        var limits = rlimit()
        guard getrlimit(resource, &limits) == 0 else { return 1024 }
        let ceiling: rlim_t = 1_048_576
        let wanted = min(limits.rlim_max, ceiling)
        if limits.rlim_cur < wanted {
            var raised = limits
            raised.rlim_cur = wanted
            if setrlimit(resource, &raised) == 0 { limits = raised }
        }
        return Int(min(limits.rlim_cur, ceiling))
    }

    /// The most connections the API's listener keeps open in a process with `fileLimit` open
    /// files: all but ``reserved`` and, with `metrics`, the metrics listener's own
    /// (``MetricsEndpoint/maximumConnections``); at least 16. At the cap the longest-idle
    /// connection is closed to make room (``IdleConnections``): under a hard limit of 1,024, 880.
    package static func connectionLimit(for fileLimit: Int, metrics: Bool = false) -> Int {
        max(fileLimit - reserved - (metrics ? MetricsEndpoint.maximumConnections : 0), 16)
    }
}
