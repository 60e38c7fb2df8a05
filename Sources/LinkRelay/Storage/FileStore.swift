import Foundation

/// The default ``PersistentStore``: one JSON file per key in a folder of its own.
///
/// The default folder for a backend is `Application Support/LinkRelay/<backend id>/` on Apple
/// platforms and `$XDG_DATA_HOME/LinkRelay/<backend id>/` (or `~/.local/share/…`) on Linux.
/// Writes are atomic: the data goes to a temporary file in the same folder, is synced, and then
/// replaces the old file in one rename, so a process killed mid-write leaves the previous value.
/// A temporary file left by such a kill is removed when another process first reads from the
/// folder.
///
/// Clients in several processes may use one folder at the same time (an app and its extension
/// in an App Group container): the event queue's journal is changed only under an advisory
/// lock (`flock`) on the folder's `.lock` file, and each client holds a shared lock on `.users`
/// while it runs, so that claims left by a client that is gone can be told from live ones.
public struct FileStore: PersistentStore {
    /// The folder the files live in. Created on the first write.
    public let directory: URL

    /// A store in `directory`.
    public init(directory: URL) {
        self.directory = directory
    }

    /// The store for `backend` in the platform's application-support folder:
    /// `LinkRelay/<backend id>/`.
    public static func forBackend(_ backend: BackendID) throws -> FileStore {
        FileStore(directory: try linkRelayFolder(for: backend).appendingPathComponent(safeName(backend.rawValue), isDirectory: true))
    }

    /// The app's own store, `LinkRelay/` itself, beside the backends' folders: the launch
    /// history lives here, so that it outlives a switch of backends.
    public static func forApp() throws -> FileStore {
        FileStore(directory: try linkRelayFolder(for: nil))
    }

    private static func linkRelayFolder(for backend: BackendID?) throws -> URL {
        do {
            return try FileManager.default.url(
                for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: false
            ).appendingPathComponent("LinkRelay", isDirectory: true)
        } catch {
            throw DeepLinkError(
                .invalidConfiguration, "The application-support folder is not available.", backend: backend,
                underlying: error)
        }
    }

    public func data(forKey key: String) throws -> Data? {
        removeLeftoversOnce()
        let file = fileURL(for: key)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        return try Data(contentsOf: file)
    }

    public func setData(_ data: Data, forKey key: String) throws {
        let file = fileURL(for: key)
        let temporary = directory.appendingPathComponent(
            Self.temporaryPrefix(for: key, process: ProcessInfo.processInfo.processIdentifier) + UUID().uuidString + ".tmp",
            isDirectory: false)
        do {
            try Self.writeAtomically(data, via: temporary, to: file)
        } catch {
            // The folder does not exist yet (the first write): create it, then write again.
            // Trying the write first saves the folder checks on every later write.
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Self.writeAtomically(data, via: temporary, to: file)
        }
    }

    /// Adds `data` at the end of the file, and syncs it. A kill mid-write can leave part of it;
    /// the event queue's reader ignores an unfinished last line.
    public func appendData(_ data: Data, forKey key: String) throws {
        try appendLines(data, forKey: key)
    }

    /// Writes all of `data` at the descriptor's position and syncs it.
    static func writeAll(_ data: Data, to descriptor: Int32) throws {
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                offset += written
            }
        }
        guard fsync(descriptor) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Writes `data` to `temporary`, syncs it, and renames it over `file`: readers see the old
    /// file or the new one, never a part.
    private static func writeAtomically(_ data: Data, via temporary: URL, to file: URL) throws {
        do {
            try data.write(to: temporary)
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }
            try handle.synchronize()
            guard rename(temporary.path, file.path) == 0 else {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// The folders whose leftovers this process has already removed.
    private static let cleaned = Locked<Set<String>>([])

    /// Removes, once per folder and process, the temporary files a killed process left behind:
    /// those named for another process (this process's own may be a write under way). Names,
    /// not file dates, tell them apart, so the store reads no file timestamps.
    private func removeLeftoversOnce() {
        let path = directory.path
        guard Self.cleaned.withLock({ $0.insert(path).inserted }) else { return }
        let own = "." + String(ProcessInfo.processInfo.processIdentifier) + "."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return }
        for name in names where name.hasPrefix(".") && name.hasSuffix(".tmp") && name.contains(".json.") {
            // `.<key>.json.<pid>.<uuid>.tmp`: keep this process's own.
            guard let afterKey = name.range(of: ".json.", options: .backwards) else { continue }
            if name[afterKey.lowerBound...].dropFirst(5).hasPrefix(own) { continue }
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name, isDirectory: false))
        }
    }

    /// `.<key>.json.<pid>.`: the start of a temporary file's name.
    private static func temporaryPrefix(for key: String, process: Int32) -> String {
        "." + safeName(key) + ".json.\(process)."
    }

    /// Files are written atomically and synced, which costs hundreds of microseconds: the
    /// client writes its event queue off the caller's path.
    public var prefersDeferredWrites: Bool { true }

    public func removeData(forKey key: String) throws {
        let file = fileURL(for: key)
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        try FileManager.default.removeItem(at: file)
    }

    public func removeAll() throws {
        guard FileManager.default.fileExists(atPath: directory.path) else { return }
        for file in try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        where file.pathExtension == "json" {
            try FileManager.default.removeItem(at: file)
        }
    }

    func fileURL(for key: String) -> URL {
        directory.appendingPathComponent(FileStore.safeName(key) + ".json", isDirectory: false)
    }

    /// Letters, digits, `.`, `-` and `_` are kept; anything else becomes `_`, so a key or backend
    /// id can never leave the folder.
    static func safeName(_ name: String) -> String {
        let mapped = String(
            name.unicodeScalars.map { scalar -> Character in
                let allowed = scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "._-".unicodeScalars.contains(scalar))
                return allowed ? Character(scalar) : "_"
            })
        return mapped.isEmpty || mapped.allSatisfy({ $0 == "." }) ? "_" + mapped : mapped
    }
}
