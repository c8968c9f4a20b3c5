import CLinux
import Foundation

/// A long-running program a test starts and kills (a sound server, a session bus), spawned with
/// nothing of the test process's but stdin from /dev/null and its output in a log file.
///
/// Not Foundation's `Process`: that gives each child one end of a socket pair and takes the other
/// end closing for the child's exit. A daemon spawned by `Process` while another test was launching
/// a child inherited that child's end (not close-on-exec) and kept it open as long as it lived, so
/// every test running beside it waited until it was killed to see its own tools exit (six tests
/// took 43 s together, 1.5 s each alone). Here every descriptor above stderr is closed in the child
/// (`posix_spawn_file_actions_addclosefrom_np`), as hark spawns its own helper.
final class Daemon {
    let name: String
    let pid: pid_t
    private let logFile: String
    private var exitStatus: Int32?

    /// Starts `executable` with `arguments` and `environment`, its stdout and stderr into
    /// `logFile`, with no signal blocked (the test's thread blocks them all) and in its own process
    /// group.
    init(_ name: String, executable: String, arguments: [String], environment: [String: String], logFile: String) throws {
        self.name = name
        self.logFile = logFile
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, logFile, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO)
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGALRM] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        var process: pid_t = 0
        let status = posix_spawn(&process, executable, &actions, &attributes, argv, envp)
        guard status == 0 else { throw TestRigError("cannot start \(name): \(String(cString: strerror(status)))") }
        pid = process
    }

    deinit { stop() }

    /// Whether it is still running (reaps it when it has exited).
    var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == 0 { return true }
        exitStatus = reaped == pid ? status : -1
        return false
    }

    /// For a failure's message: the last 600 characters or so of what it wrote, from the start of
    /// the line they begin in (a daemon's first error line names the cause; cut, it did not).
    var logTail: String {
        let text = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        let tail = text.suffix(600)
        guard tail.startIndex != text.startIndex, let lineStart = text[..<tail.startIndex].lastIndex(of: "\n") else { return String(tail) }
        return String(text[text.index(after: lineStart)...])
    }

    /// Kills it (SIGKILL, as a crash) and reaps it. Idempotent.
    func stop() {
        guard exitStatus == nil else { return }
        kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        exitStatus = status
    }
}
