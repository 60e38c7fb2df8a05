import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A program the tests start (the server's binary, `zbarimg`, `mount`), with its standard output
/// and error piped or discarded, its end awaited.
///
/// On Linux it is started with `posix_spawn` directly: Foundation's `Process.run()` there reads
/// `/proc/self/fd` with a 256-byte copy of each directory entry, past the end of glibc's buffer
/// when an entry sits at its end, and the whole test process then dies with "Bad pointer
/// dereference" (swiftlang/swift-corelibs-foundation#5472, unfixed in Swift 6.3.1; seen here in
/// two runs of the Server's suite in a row). The child gets no other descriptor of the test
/// process (`closefrom(3)`, as Foundation does it), `/dev/null` as its input, and the
/// environment given. Elsewhere Foundation's `Process` does the same work.
final class ChildProcess: Sendable {
    /// Where a child's output goes.
    enum Output {
        case pipe, discard
    }

    /// How the child ended: its exit status, or the signal that ended it.
    struct Termination: Sendable, Equatable {
        var status: Int32
        var signaled: Bool
    }

    /// The read end of its standard output or error, when piped.
    let output: FileHandle?
    let error: FileHandle?
    private let identifier: Int32
    private let ended = DispatchGroup()
    /// How it ended, once it has.
    private final class Ending: Sendable {
        let termination = Mutex<Termination?>(nil)
    }

    private let ending = Ending()

    /// Starts `executable` with `arguments`; `environment` replaces the test process's when given.
    init(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil, output: Output = .discard,
        error: Output = .discard
    ) throws {
        #if canImport(Glibc)
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            var readEnds: [Int32?] = []
            var writeEnds: [Int32] = []
            for (target, kind) in [(Int32(1), output), (2, error)] {
                switch kind {
                case .discard:
                    posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
                    readEnds.append(nil)
                case .pipe:
                    var ends: [Int32] = [0, 0]
                    guard pipe(&ends) == 0 else { throw ChildProcessError("pipe", errno) }
                    // Neither end may leak into another child started meanwhile (the child's own
                    // copy is made by dup2, which clears the flag).
                    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
                    posix_spawn_file_actions_adddup2(&actions, ends[1], target)
                    readEnds.append(ends[0])
                    writeEnds.append(ends[1])
                }
            }
            defer { for end in writeEnds { close(end) } }
            if let directory {
                guard let addChdir = Self.addChdir else { throw ChildProcessError("posix_spawn_file_actions_addchdir_np", ENOSYS) }
                _ = directory.path.withCString { addChdir(&actions, $0) }
            }
            if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
            let argumentList = [executable.path] + arguments
            let environmentList = (environment ?? ProcessInfo.processInfo.environment).map { "\($0.key)=\($0.value)" }
            let argv = argumentList.map { strdup($0) } + [nil]
            let envp = environmentList.map { strdup($0) } + [nil]
            defer { for pointer in argv + envp { free(pointer) } }
            var pid: pid_t = 0
            let started = posix_spawn(&pid, executable.path, &actions, nil, argv, envp)
            guard started == 0 else {
                for case let end? in readEnds { close(end) }
                throw ChildProcessError("posix_spawn \(executable.lastPathComponent)", started)
            }
            identifier = pid
            let child = pid
            self.output = readEnds[0].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
            self.error = readEnds[1].map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
            ended.enter()
            let ending = self.ending
            let ended = self.ended
            // waitpid blocks: a thread of its own, never a task's.
            Thread.detachNewThread {
                var status: Int32 = 0
                while waitpid(child, &status, 0) == -1 && errno == EINTR {}
                let signal = status & 0x7F
                ending.termination.withLock {
                    $0 =
                        signal == 0
                        ? Termination(status: (status >> 8) & 0xFF, signaled: false) : Termination(status: signal, signaled: true)
                }
                ended.leave()
            }
        #else
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            if let environment { process.environment = environment }
            if let directory { process.currentDirectoryURL = directory }
            process.standardInput = FileHandle.nullDevice
            let outputPipe = output == .pipe ? Pipe() : nil
            let errorPipe = error == .pipe ? Pipe() : nil
            process.standardOutput = outputPipe ?? FileHandle.nullDevice
            process.standardError = errorPipe ?? FileHandle.nullDevice
            ended.enter()
            let ending = self.ending
            let ended = self.ended
            process.terminationHandler = { process in
                ending.termination.withLock {
                    $0 = Termination(status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal)
                }
                ended.leave()
            }
            try process.run()
            identifier = process.processIdentifier
            self.output = outputPipe?.fileHandleForReading
            self.error = errorPipe?.fileHandleForReading
        #endif
    }

    /// Sends SIGTERM (`kill`'s default), as `Process.terminate()` does.
    func terminate() {
        kill(identifier, SIGTERM)
    }

    /// Waits for the child to end (blocking the calling thread).
    func waitUntilExit() -> Termination {
        ended.wait()
        return ending.termination.withLock { $0 } ?? Termination(status: -1, signaled: false)
    }

    /// Waits for the child to end without blocking a task's thread.
    func exit() async -> Termination {
        await withCheckedContinuation { continuation in
            ended.notify(queue: .global()) {
                continuation.resume(returning: self.ending.termination.withLock { $0 } ?? Termination(status: -1, signaled: false))
            }
        }
    }

    /// Runs `executable` to its end: its status and what it printed to standard output.
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let child = try ChildProcess(URL(fileURLWithPath: executable), arguments, output: .pipe)
        let data = child.output?.readDataToEndOfFile() ?? Data()
        return (child.waitUntilExit().status, String(decoding: data, as: UTF8.self))
    }

    #if canImport(Glibc)
        private typealias SpawnAction = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?) -> Int32
        private typealias SpawnCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32

        /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29) and `…_addclosefrom_np` (2.34), which
        /// its headers declare only for `_GNU_SOURCE`: looked up by name.
        private static let addChdir: SpawnAction? = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addchdir_np").map {
            unsafeBitCast($0, to: SpawnAction.self)
        }
        private static let addCloseFrom: SpawnCloseFrom? = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np").map {
            unsafeBitCast($0, to: SpawnCloseFrom.self)
        }
    #endif
}

/// A child that could not be started: the call that failed and its `errno`.
struct ChildProcessError: Error, CustomStringConvertible {
    let call: String
    let code: Int32

    init(_ call: String, _ code: Int32) {
        self.call = call
        self.code = code
    }

    var description: String { "\(call) failed: \(String(cString: strerror(code)))" }
}
