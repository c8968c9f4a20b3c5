import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// How the session's thread sleeps while a recording runs: in one `poll(2)` on a signalfd for the
/// stop signals, SIGUSR1 and the encoders' SIGUSR2, and on whatever descriptors the caller watches
/// (the permission files' inotify, the desktop switch's pipe), with a timeout only when something
/// must happen on time (a status line's 10 Hz). While nothing happens it does not wake at all:
/// the 100 ms `sigtimedwait` it replaces woke it ten times a second for a whole recording (#16).
///
/// Create it on the thread that waits, with the signals blocked (`StopSignals.block()`): a
/// signalfd reads the signals pending for the process and for the thread that reads it, which is
/// how the encoders' thread-directed SIGUSR2 reaches it. Where no signalfd can be made, it falls
/// back to `sigtimedwait` in 100 ms steps, as before.
final class SessionWait {
    enum Event: Equatable {
        /// A signal was taken.
        case signal(Int32)
        /// A watched descriptor is readable; whoever owns it must read it, or the next wait
        /// returns at once.
        case descriptorReady
        case timeout
    }

    /// The signalfd, or -1.
    private let signals: Int32

    init() {
        var set = StopSignals.all
        signals = signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC))
    }

    deinit {
        if signals >= 0 { close(signals) }
    }

    /// Sleeps until a signal, a readable descriptor in `descriptors`, or `timeoutMilliseconds`
    /// (nil: no timeout). Signals come first when several things happened at once.
    func next(watching descriptors: [Int32], timeoutMilliseconds: Int?) -> Event {
        guard signals >= 0 else {
            return StopSignals.wait(milliseconds: min(timeoutMilliseconds ?? 100, 100)).map(Event.signal) ?? .timeout
        }
        if let signal = takeSignal() { return .signal(signal) }
        var set = [pollfd(fd: signals, events: Int16(POLLIN), revents: 0)]
            + descriptors.filter { $0 >= 0 }.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&set, nfds_t(set.count), Int32(timeoutMilliseconds ?? -1))
        guard ready > 0 else { return .timeout }  // a timeout, or EINTR: the caller looks again
        if let signal = takeSignal() { return .signal(signal) }
        return set.dropFirst().contains { $0.revents != 0 } ? .descriptorReady : .timeout
    }

    /// Reads one pending signal from the signalfd, if there is one.
    private func takeSignal() -> Int32? {
        var info = signalfd_siginfo()
        let count = read(signals, &info, MemoryLayout<signalfd_siginfo>.size)
        return count == MemoryLayout<signalfd_siginfo>.size ? Int32(info.ssi_signo) : nil
    }
}
