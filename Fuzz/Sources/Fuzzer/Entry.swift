import FuzzSupport

// One executable for every target; LINKRELAY_FUZZ_TARGET picks one (linkparser, linkforty,
// limelink, dynalinks, paylisher). See ../run.

/// libFuzzer's entry point: one input through the chosen target.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    FuzzTarget.fromEnvironment.run(UnsafeBufferPointer(start: data, count: size))
    return 0
}

#if !FUZZING
    /// Without libFuzzer (a plain build): runs each file named on the command line once through
    /// the chosen target, to reproduce a crash in a debugger.
    @main
    struct Replay {
        static func main() { FuzzTarget.fromEnvironment.replay(CommandLine.arguments.dropFirst()) }
    }
#endif
