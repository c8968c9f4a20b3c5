#if canImport(Glibc)
import Glibc
#endif

/// The signals that end a recording (SIGINT, SIGTERM, SIGHUP, and SIGQUIT: a terminal's Ctrl-\
/// finishes the file too, where its default would dump core, and Swift's crash handler printed a
/// backtrace and let the recording go on), and SIGUSR1, which starts a new file, taken
/// synchronously with `sigtimedwait` on the session's own thread instead of in a signal handler.
///
/// `block()` must run before any other thread starts, so every thread inherits the blocked mask and
/// the signals stay pending until the session thread takes them. SIGPIPE is ignored, so a reader
/// that goes away shows up as an EPIPE write error instead of killing the process.
///
/// A stop signal hark was started with ignored stays ignored, as the shells' and coreutils' own
/// programs keep it: `nohup` ignores SIGHUP so a recording outlives its terminal, and a shell
/// script's background job (`hark record … &`) starts with SIGINT and SIGQUIT ignored so a Ctrl-C
/// meant for the script's foreground leaves it be. Blocking it would undo that: the kernel
/// discards an ignored signal only while it is not blocked, and queues a blocked one, which the
/// session thread then took as a stop (`nohup hark record …` ended when its terminal closed).
public enum StopSignals {
    static let stopping: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT].filter { !wasIgnoredAtStart($0) }
    /// SIGUSR1: start a new file at once (a split recording). Taken like the stop signals.
    public static let newFile = SIGUSR1
    /// SIGUSR2, sent by the encoder thread to the session thread (`pthread_kill`, never to the
    /// process) when the encoder has finished, so the session thread stops waiting at once instead
    /// of at the end of its 100 ms wait (every recording ended up to a tenth of a second late).
    /// Only sent to a thread that blocks it; one from outside is harmless (the session thread just
    /// looks again) while the signals are blocked, as they are in every thread of hark.
    static let wake = SIGUSR2

    /// Blocks the stop signals for this thread and the threads it starts, and turns SIGPIPE and
    /// SIGXFSZ (file size limit) into write errors. Idempotent.
    public static func block() {
        var set = signalSet()
        pthread_sigmask(SIG_BLOCK, &set, nil)
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
    }

    /// Undoes `block()` for commands that do not record: a pending stop signal is delivered now,
    /// with its default action.
    public static func unblock() {
        var set = signalSet()
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        signal(SIGPIPE, SIG_DFL)
        signal(SIGXFSZ, SIG_DFL)
    }

    /// Waits up to `milliseconds` for a stop signal; returns it, or nil on timeout.
    /// The corresponding C function is `sigtimedwait`.
    static func wait(milliseconds: Int) -> Int32? {
        var set = signalSet()
        var timeout = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        let result = sigtimedwait(&set, nil, &timeout)
        return result > 0 ? result : nil
    }

    /// Waits up to `milliseconds` for a stop signal alone, before anything is recorded: SIGUSR1
    /// (nothing to split yet) and a wake are taken and let go. Returns the stop signal, or nil.
    static func waitForStop(milliseconds: Int) -> Int32? {
        guard let signal = wait(milliseconds: milliseconds), stopping.contains(signal) else { return nil }
        return signal
    }

    /// Whether a stop signal waits to be taken (for a command that keeps them blocked while it
    /// writes, and checks between steps). The corresponding C function is `sigpending`.
    @Sendable public static func isStopPending() -> Bool {
        var pending = sigset_t()
        sigpending(&pending)
        return stopping.contains { sigismember(&pending, $0) == 1 }
    }

    /// Whether this thread has the signals blocked (`block()` ran before it started).
    static var areBlocked: Bool {
        var current = sigset_t()
        pthread_sigmask(SIG_BLOCK, nil, &current)
        return sigismember(&current, wake) == 1
    }

    /// Wakes `thread`, waiting in `wait(milliseconds:)` with the signals blocked: the signal is
    /// pending on that thread alone, which `sigtimedwait` takes. Async-signal-safe, allocates nothing.
    /// The corresponding C function is `pthread_kill`.
    static func wake(_ thread: UInt) {
        pthread_kill(pthread_t(thread), wake)
    }

    /// Takes a wake still pending on this thread (it arrived after the waiter had stopped waiting).
    /// The corresponding C function is `sigtimedwait`, with a zero timeout.
    static func discardPendingWake() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, wake)
        var immediately = timespec(tv_sec: 0, tv_nsec: 0)
        while sigtimedwait(&set, nil, &immediately) == wake {}
    }

    /// Whether `signal`'s disposition is SIG_IGN, as the process inherited it: read once, on the
    /// first use of `stopping` (from `block()`, first thing in `main`); hark sets no disposition of
    /// a stop signal itself. The corresponding C function is `sigaction`.
    private static func wasIgnoredAtStart(_ signal: Int32) -> Bool {
        var current = sigaction()
        guard sigaction(signal, nil, &current) == 0 else { return false }
        return unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }

    /// The signal's conventional name, e.g. "SIGINT".
    static func name(of signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        case SIGQUIT: "SIGQUIT"
        default: "signal \(signal)"
        }
    }

    /// Every signal `block()` blocks and the session's thread takes.
    static var all: sigset_t { signalSet() }

    private static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in stopping + [newFile, wake] { sigaddset(&set, signal) }
        return set
    }
}
