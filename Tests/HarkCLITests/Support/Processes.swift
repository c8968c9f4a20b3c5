import Foundation
import Testing

/// What a finished process left behind.
struct ToolResult {
    let status: Int32
    let standardOutput: Data
    let standardError: String
    /// Seconds from launch to exit.
    let wallSeconds: Double

    /// The lines hark wrote to stderr.
    var errorLines: [String] {
        standardError.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }
}

/// The `hark` binary under test: `HARK_BINARY`, or the one built next to this test bundle. Found
/// before any test starts hark, so the stop signals are set back to their defaults first.
let harkBinary: URL = {
    restoreIgnoredStopSignals()
    if let path = ProcessInfo.processInfo.environment["HARK_BINARY"] { return URL(fileURLWithPath: path) }
    let testExecutable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var directory = testExecutable.deletingLastPathComponent()
    // The test runner may live inside a bundle directory (harkPackageTests.xctest/...).
    for _ in 0..<3 {
        let candidate = directory.appendingPathComponent("hark")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        directory.deleteLastPathComponent()
    }
    return URL(fileURLWithPath: ".build/debug/hark")
}()

/// Sets the stop signals this test process was started with ignored back to their default action.
/// scripts/test runs the test shards as a script's background jobs, which start with SIGINT and
/// SIGQUIT ignored; Foundation's `Process` passes an ignored signal on to its children, and hark
/// keeps a stop signal it was started with ignored (as `nohup` wants), so the tests' Ctrl-C would
/// not have stopped it. A user's terminal starts hark with the defaults. (SIGHUP too, which the
/// tests send: under `nohup scripts/test` the test process then ends with its terminal.)
private func restoreIgnoredStopSignals() {
    for stop in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
        var current = sigaction()
        if sigaction(stop, nil, &current) == 0,
           unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) {
            signal(stop, SIG_DFL)
        }
    }
}

/// A running process whose stdout and stderr go to files (no pipe can fill up and stall it).
final class RunningProcess {
    let process = Process()
    private let outputFile: URL
    private let errorFile: URL
    private let start = Date()

    init(_ executable: URL, _ arguments: [String], environment: [String: String], scratch: URL,
         standardInput: FileHandle? = nil) throws {
        let tag = UUID().uuidString.prefix(8)
        outputFile = scratch.appendingPathComponent("stdout-\(tag)")
        errorFile = scratch.appendingPathComponent("stderr-\(tag)")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: outputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        process.standardInput = standardInput ?? FileHandle.nullDevice
        try process.run()
    }

    var pid: pid_t { process.processIdentifier }

    func send(_ signal: Int32) { kill(pid, signal) }

    /// Waits for exit, killing the process if it outlives `timeout` seconds. A process killed so
    /// has a last line on its stderr saying it timed out: a failing test's message (most print the
    /// stderr) then tells a timeout from a crash, which both end in SIGKILL's status 137.
    func wait(timeout: Double = 60) -> ToolResult {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        let timedOut = process.isRunning
        if timedOut { kill(pid, SIGKILL) }
        process.waitUntilExit()
        let wall = Date().timeIntervalSince(start)
        let output = (try? Data(contentsOf: outputFile)) ?? Data()
        var error = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        if timedOut { error += "[test: killed after a \(timeout) s timeout]\n" }
        try? FileManager.default.removeItem(at: outputFile)
        try? FileManager.default.removeItem(at: errorFile)
        let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return ToolResult(status: status, standardOutput: output, standardError: error, wallSeconds: wall)
    }
}

/// Runs hark with `arguments` in the rig's environment and waits for it.
func runHark(_ arguments: [String], rig: ALSATestRig, timeout: Double = 60) throws -> ToolResult {
    try startHark(arguments, rig: rig).wait(timeout: timeout)
}

/// Runs hark with `arguments` writing its stdout into a real pipe, as `hark … -o - | reader` does
/// (a regular file would let hark seek back and rewrite its header). A `cat` reads the pipe into
/// the returned result's `standardOutput`; the status is hark's own (bash's `pipefail`).
func runHarkIntoPipe(_ arguments: [String], rig: ALSATestRig, timeout: Double = 60) throws -> ToolResult {
    let script = #"set -o pipefail; "$@" | cat"#
    return try RunningProcess(URL(fileURLWithPath: "/bin/bash"), ["-c", script, "bash", harkBinary.path] + arguments,
                              environment: rig.environment, scratch: rig.directory).wait(timeout: timeout)
}

/// Starts hark with `arguments` in the rig's environment, for tests that signal or race it.
func startHark(_ arguments: [String], rig: ALSATestRig) throws -> RunningProcess {
    try RunningProcess(harkBinary, arguments, environment: rig.environment, scratch: rig.directory)
}

/// Runs a tool found on PATH (flac, metaflac, pulseaudio, pactl) and waits for it.
@discardableResult
func runTool(_ name: String, _ arguments: [String], environment: [String: String]? = nil,
             timeout: Double = 60) throws -> ToolResult {
    guard let path = findOnPath(name) else { throw TestRigError("\(name) is not installed (run scripts/install-deps)") }
    let scratch = FileManager.default.temporaryDirectory
    return try RunningProcess(URL(fileURLWithPath: path), arguments,
                              environment: environment ?? ProcessInfo.processInfo.environment, scratch: scratch)
        .wait(timeout: timeout)
}

func findOnPath(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// `executable` and `arguments`, wrapped so the program starts with no signal blocked.
///
/// Foundation's `Process` spawns from the calling thread, and a test runs on a Swift concurrency
/// thread that blocks every signal; a child inherits that mask, so a shell script's `kill` or a
/// program's own timer (`stress-ng --timeout`, SIGALRM) would never take effect. python3 (installed
/// by scripts/install-deps) clears the mask and restores default dispositions, then execs.
func withSignalsUnblocked(_ executable: URL, _ arguments: [String]) -> (URL, [String]) {
    let reset = """
        import os, signal, sys
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGALRM, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(s, signal.SIG_DFL)
        os.execv(sys.argv[1], sys.argv[1:])
        """
    return (URL(fileURLWithPath: findOnPath("python3") ?? "/usr/bin/python3"), ["-c", reset, executable.path] + arguments)
}

/// Like `withSignalsUnblocked`, for a script that leaves daemons running (samples/virtual-mic.sh):
/// python3 runs it as a child with every inherited descriptor above stderr closed, so the daemons
/// do not hold Foundation's process-monitoring descriptor open, which kept `waitUntilExit` waiting
/// for them rather than for the script.
func detachedFromTheTest(_ executable: URL, _ arguments: [String]) -> (URL, [String]) {
    let run = """
        import signal, subprocess, sys
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM, signal.SIGCHLD):
            signal.signal(s, signal.SIG_DFL)
        sys.exit(subprocess.run(sys.argv[1:], close_fds=True).returncode)
        """
    return (URL(fileURLWithPath: findOnPath("python3") ?? "/usr/bin/python3"), ["-c", run, executable.path] + arguments)
}

/// A bash command line that runs `command` with its stdout a pipe whose reader has already gone:
/// bash opens the pipe to a process substitution and waits for that to exit first, so the first
/// write fails (EPIPE) every time, whatever the schedule.
func readerGoneBeforeTheStart(_ command: String) -> String {
    "exec 3> >(true); wait $!; " + command + " >&3"
}

/// A failure as the user must see it: the exit code, one line on stderr beginning "hark: " and
/// naming the problem, nothing on stdout.
func expectOneLineFailure(_ result: ToolResult, exitCode: Int32, mentioning text: String,
                          sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status == exitCode, "\(result.standardError)", sourceLocation: sourceLocation)
    #expect(result.errorLines.count == 1, "\(result.standardError)", sourceLocation: sourceLocation)
    #expect(result.errorLines.first?.hasPrefix("hark: ") == true, sourceLocation: sourceLocation)
    #expect(result.standardError.contains(text), "\(result.standardError)", sourceLocation: sourceLocation)
    #expect(result.standardOutput.isEmpty, sourceLocation: sourceLocation)
}

/// A shell command reading its stdin (a pipe from hark) into `output`: it takes nothing until
/// the pipe is full, so hark's writes block; then it takes nothing for `stallSeconds` more, then
/// everything. It says "the pipe filled up" on stderr (or that it gave up waiting, after 60 s).
/// With `readyFile`, it makes that file once it watches the pipe: a writer started after it
/// (`afterReaderIsReady`) is not held up longer than asked, as one was when python took a second
/// or more to start on a loaded machine while the pipe was already full (the stall hark saw was
/// then that much longer, and the default ring's 2.7 s was passed).
func stallingReader(stallSeconds: Double, into output: String, readyFile: String? = nil) -> String {
    let script = """
        import fcntl, shutil, struct, sys, termios, time
        if sys.argv[3]:
            open(sys.argv[3], "w").close()
        capacity = fcntl.fcntl(0, 1032)  # F_GETPIPE_SZ
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            queued = struct.unpack("i", fcntl.ioctl(0, termios.FIONREAD, bytes(4)))[0]
            # A write that does not fit blocks; hark's FLAC frames are a few kB.
            if queued >= capacity - 16384:
                print(f"reader: the pipe filled up ({queued} of {capacity} bytes)", file=sys.stderr)
                break
            time.sleep(0.005)
        else:
            print("reader: the pipe never filled up", file=sys.stderr)
        stalled = time.monotonic()
        time.sleep(float(sys.argv[1]))
        with open(sys.argv[2], "wb") as output:
            first = sys.stdin.buffer.read1(65536)
            # On a loaded machine the stall lasts longer than asked: say by how much.
            print(f"reader: stalled {time.monotonic() - stalled:.2f} s", file=sys.stderr)
            output.write(first)
            shutil.copyfileobj(sys.stdin.buffer, output)
        """
    return ["python3", "-c", script, String(stallSeconds), output, readyFile ?? ""].map(shellQuoted).joined(separator: " ")
}

/// `command` as a shell command that starts once `readyFile` exists (`stallingReader`'s).
func afterReaderIsReady(_ readyFile: String, _ command: String) -> String {
    "{ while [ ! -e \(shellQuoted(readyFile)) ]; do sleep 0.01; done; \(command); }"
}
