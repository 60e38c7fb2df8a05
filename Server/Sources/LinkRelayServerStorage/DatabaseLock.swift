import LinkRelayServerCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One serving process per SQLite file: `serve` holds an exclusive `flock` on the database file
/// while it runs, so a second server started on the same file refuses to start instead of
/// sharing it silently (two processes on one file serialise every write on SQLite's lock and
/// each run their own hourly retention pass). The CLI's other commands (`keys`, `stats`,
/// `migrate`) take no lock: they may run beside the server.
///
/// SQLite's own locks are POSIX record locks (`fcntl`), which are independent of `flock` on
/// Linux and macOS, so this lock never blocks SQLite. The kernel releases it when the process
/// ends, however it ends (kill -9 included): there is no stale lock file to remove.
package final class DatabaseLock: Sendable {
    private let descriptor: Int32

    /// Takes the lock on the SQLite file at `path`, which must exist.
    /// - Throws: ``StoreError`` (`unusableLocation`) when another process holds it, or the file
    ///   cannot be opened.
    package init(sqlitePath path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw StoreError(.unusableLocation, "Cannot open \(path) to lock it: \(String(cString: strerror(errno))).")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let busy = errno == EWOULDBLOCK
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw StoreError(
                .unusableLocation,
                busy
                    ? "Another linkrelay-server is serving \(path): one process per SQLite file (use PostgreSQL for several)."
                    : "Cannot lock \(path): \(reason).")
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }
}
