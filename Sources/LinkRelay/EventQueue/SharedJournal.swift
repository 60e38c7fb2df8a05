import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A store whose folder other processes may use at the same time, as an app and its extension
/// share an App Group container. The client reads and writes the event queue's journal under
/// a lock every process takes, and reads what the others added before it decides anything.
protocol SharedJournalStore: PersistentStore {
    /// Runs `body` holding the folder's lock, which every process (and every client) using the
    /// folder takes for the queue's journal. Not reentrant.
    func withExclusiveLock<T>(_ body: () throws -> T) throws -> T
    /// The journal file's identity (its first line, `#` and a generation written with every
    /// new file: it changes when the file is replaced, not when added to) and size; `nil` when
    /// there is none. No `stat`: file metadata is a required-reason API on Apple platforms.
    func journalState(forKey key: String) throws -> JournalFileState?
    /// The journal's bytes from `offset` to its end.
    func readJournal(forKey key: String, from offset: Int) throws -> Data
    /// Adds `data` at the end, after a line break when the value ends in an unfinished line (a
    /// process killed mid-write), so that a new line never continues a broken one. A new file
    /// starts with a generation line.
    func appendLines(_ data: Data, forKey key: String) throws
    /// Registers the caller as a user of the folder for as long as it keeps the result; it says
    /// whether no other user was alive.
    func join() -> FolderMembership
}

/// Where a journal file stands: which file, and how long.
struct JournalFileState: Sendable, Equatable {
    var identity: String
    var size: Int
}

/// A client's registration as a user of a folder (a shared lock on its `.users` file, which
/// the system drops when the process ends, however it ends).
final class FolderMembership: Sendable {
    /// No other user held the folder when this one joined.
    let sole: Bool
    private let descriptor: Int32

    init(sole: Bool, descriptor: Int32) {
        self.sole = sole
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }
}

extension FileStore: SharedJournalStore {
    func withExclusiveLock<T>(_ body: () throws -> T) throws -> T {
        let descriptor = try openInFolder(".lock", flags: O_RDWR | O_CREAT)
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        }
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    func journalState(forKey key: String) throws -> JournalFileState? {
        let descriptor = open(fileURL(for: key).path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        defer { close(descriptor) }
        let size = lseek(descriptor, 0, SEEK_END)
        guard size >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var head = [UInt8](repeating: 0, count: 64)
        let count = pread(descriptor, &head, head.count, 0)
        var identity = ""
        if count > 0, head[0] == UInt8(ascii: "#"), let end = head[0..<count].firstIndex(of: 0x0A) {
            identity = String(decoding: head[1..<end], as: UTF8.self)
        }
        return JournalFileState(identity: identity, size: Int(size))
    }

    /// The first line of a new journal file: `#` and a generation no other file has.
    static func generationLine() -> Data {
        Data(("#" + UUID().uuidString + "\n").utf8)
    }

    func readJournal(forKey key: String, from offset: Int) throws -> Data {
        let handle = try FileHandle(forReadingFrom: fileURL(for: key))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(max(offset, 0)))
        return try handle.readToEnd() ?? Data()
    }

    func appendLines(_ data: Data, forKey key: String) throws {
        let descriptor = try openInFolder(fileURL(for: key).lastPathComponent, flags: O_RDWR | O_APPEND | O_CREAT)
        defer { close(descriptor) }
        let size = lseek(descriptor, 0, SEEK_END)
        guard size >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        var bytes = data
        // A line a failed write (or a kill) cut short is cut off before adding: finished by the
        // new lines, it could become a line nobody wrote whole (an event sent from memory, say).
        let end = try Self.endOfLastLine(descriptor, size: Int(size))
        if end < size, ftruncate(descriptor, off_t(end)) != 0 { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        if end == 0 { bytes = Self.generationLine() + bytes }
        do {
            try Self.writeAll(bytes, to: descriptor)
        } catch {
            // All or nothing: lines of a failed write that landed (part of a batch of claims,
            // say) are taken back, so that the store holds only what the caller was told it does.
            _ = ftruncate(descriptor, off_t(end))
            throw error
        }
    }

    /// Where the file's last finished line ends (just past its newline): `size` when the file
    /// ends in one, 0 when it has none. Reads back from the end, a block at a time.
    static func endOfLastLine(_ descriptor: Int32, size: Int) throws -> Int {
        var last: UInt8 = 0
        guard size > 0 else { return 0 }
        guard pread(descriptor, &last, 1, off_t(size - 1)) == 1 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        if last == 0x0A { return size }
        var block = [UInt8](repeating: 0, count: 4096)
        var end = size - 1
        while end > 0 {
            let start = max(0, end - block.count)
            let count = pread(descriptor, &block, end - start, off_t(start))
            guard count == end - start else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
            if let newline = block[0..<count].lastIndex(of: 0x0A) { return start + newline + 1 }
            end = start
        }
        return 0
    }

    func join() -> FolderMembership {
        guard let descriptor = try? openInFolder(".users", flags: O_RDWR | O_CREAT) else {
            return FolderMembership(sole: false, descriptor: -1)
        }
        let sole = flock(descriptor, LOCK_EX | LOCK_NB) == 0
        _ = flock(descriptor, LOCK_SH)
        return FolderMembership(sole: sole, descriptor: descriptor)
    }

    /// Opens `name` in the folder (creating the folder when it is missing).
    private func openInFolder(_ name: String, flags: Int32) throws -> Int32 {
        let path = directory.appendingPathComponent(name, isDirectory: false).path
        var descriptor = open(path, flags | O_CLOEXEC, 0o644)
        if descriptor < 0, errno == ENOENT {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            descriptor = open(path, flags | O_CLOEXEC, 0o644)
        }
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return descriptor
    }
}
