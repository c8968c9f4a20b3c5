import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Set by the SIGCONT handler while a prompt waits: the program was stopped (Ctrl-Z, SIGSTOP) and
/// has been continued (`fg`), and the shell may have written over the question. An atomic store
/// is all the handler does (async-signal-safe); the prompt's loop takes it.
private let continuedWhilePrompting = Atomic<Bool>(false)

/// The user's answer to the consent prompt.
public enum PromptAnswer: Sendable, Equatable {
    /// Allow, and remember it.
    case allow
    /// Allow this run only; ask again next time.
    case allowOnce
    /// Don't Allow, chosen explicitly: remembered as denied.
    case deny
    /// No clear answer (end of input, Ctrl-C, something unrecognised): Don't Allow, not remembered.
    case dismissed(reason: String)
}

/// Something that can ask the user for consent.
public protocol ConsentPrompting: Sendable {
    /// Asks whether `appName` may use `resource`, quoting `purpose`; nil when there is nobody to ask.
    func ask(appName: String, resource: PermissionResource, purpose: String) -> PromptAnswer?
}

/// The consent prompt on the controlling terminal (`/dev/tty`), never on stdout or stderr, which
/// may carry audio or be redirected.
///
/// Input typed before the prompt appears is discarded, so no stray keystroke answers it. While it
/// waits, it also watches for SIGINT, SIGTERM, SIGHUP and SIGQUIT: when the program has blocked them (as
/// hark does), a Ctrl-C at the prompt dismisses it instead of killing the program; when they are
/// not blocked, their default action ends the program as usual.
public struct TerminalPrompt: ConsentPrompting {
    let terminalPath: String

    public init(terminalPath: String = "/dev/tty") {
        self.terminalPath = terminalPath
    }

    public func ask(appName: String, resource: PermissionResource, purpose: String) -> PromptAnswer? {
        let terminal = open(terminalPath, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard terminal >= 0 else { return nil }  // ENXIO: no controlling terminal
        defer { close(terminal) }
        let restore = Self.readLines(on: terminal)
        defer { restore() }
        tcflush(terminal, TCIFLUSH)
        let question = "Allow \(appName) to use \(resource.displayName)? (a/o/d): "
        // Told when the program is continued after a stop, to ask again (as sudo does): after
        // Ctrl-Z and `fg` the user saw a shell's lines and then nothing to answer. Installed
        // before the question shows, so a stop at any moment it is visible is caught.
        var previous = sigaction()
        var onContinue = sigaction()
        onContinue.__sigaction_handler.sa_handler = { _ in continuedWhilePrompting.store(true, ordering: .relaxed) }
        continuedWhilePrompting.store(false, ordering: .relaxed)
        sigaction(SIGCONT, &onContinue, &previous)
        // Unblocked on this thread while it asks: a mask inherited blocking it (a program started
        // from a thread that blocks every signal, as Dispatch's do) would keep the handler from
        // ever running.
        var continueSignal = sigset_t(), maskBefore = sigset_t()
        sigemptyset(&continueSignal)
        sigaddset(&continueSignal, SIGCONT)
        pthread_sigmask(SIG_UNBLOCK, &continueSignal, &maskBefore)
        defer {
            pthread_sigmask(SIG_SETMASK, &maskBefore, nil)
            sigaction(SIGCONT, &previous, nil)
        }
        show("""

            “\(appName)” would like to access \(resource.displayName).
              “\(purpose)”
            [a] Allow   [o] Allow Once   [d] Don't Allow
            \(question)
            """, on: terminal)
        let answer = readAnswer(from: terminal, askingAgain: question)
        switch answer {
        case .allow: show("Allowed.\n\n", on: terminal)
        case .allowOnce: show("Allowed for this run only.\n\n", on: terminal)
        case .deny: show("Not allowed.\n\n", on: terminal)
        case .dismissed(let reason): show("\nNot allowed (\(reason)).\n\n", on: terminal)
        }
        return answer
    }

    /// Puts `terminal` in the state a question on it needs, as `sudo` does for its password: lines
    /// (Enter ends one, Ctrl-D ends input, what is typed shows) and Ctrl-C as a signal, whatever
    /// the program before left it in (`stty raw`, a crashed full-screen program). Returns what puts
    /// it back as it was; nothing is changed, and nothing needs putting back, where it already
    /// answers so.
    private static func readLines(on terminal: Int32) -> () -> Void {
        var saved = termios()
        guard tcgetattr(terminal, &saved) == 0 else { return {} }
        var lines = saved
        lines.c_lflag |= tcflag_t(ICANON | ECHO | ISIG)
        lines.c_iflag |= tcflag_t(ICRNL)
        lines.c_iflag &= ~tcflag_t(INLCR | IGNCR)
        lines.c_oflag |= tcflag_t(OPOST | ONLCR)
        guard (lines.c_lflag, lines.c_iflag, lines.c_oflag) != (saved.c_lflag, saved.c_iflag, saved.c_oflag),
              tcsetattr(terminal, TCSANOW, &lines) == 0 else { return {} }
        return { _ = tcsetattr(terminal, TCSADRAIN, &saved) }
    }

    /// Reads one line, or stops at end of input or a pending stop signal; shows `question` again
    /// when the program was continued after a stop.
    private func readAnswer(from terminal: Int32, askingAgain question: String) -> PromptAnswer {
        var line: [UInt8] = []
        while true {
            if let signal = takePendingStopSignal() {
                return .dismissed(reason: signal == SIGINT ? "interrupted" : "stopped by a signal")
            }
            if continuedWhilePrompting.exchange(false, ordering: .relaxed) { show("\n" + question, on: terminal) }
            var request = pollfd(fd: terminal, events: Int16(POLLIN), revents: 0)
            let ready = poll(&request, 1, 100)
            if ready < 0 && errno != EINTR { return .dismissed(reason: "the terminal failed") }
            guard ready > 0 else { continue }
            // A Ctrl-C also makes the terminal readable (it flushes the line): the signal wins.
            if let signal = takePendingStopSignal() {
                return .dismissed(reason: signal == SIGINT ? "interrupted" : "stopped by a signal")
            }
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = buffer.withUnsafeMutableBytes { read(terminal, $0.baseAddress!, $0.count) }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard count > 0 else { return .dismissed(reason: "no answer") }
            line += buffer.prefix(count)
            if let newline = line.firstIndex(of: 0x0A) {
                return Self.parse(String(decoding: line[..<newline], as: UTF8.self))
            }
            if line.count > 1024 { return .dismissed(reason: "unclear answer") }
        }
    }

    /// Understands a, allow, y, yes / o, once, allow once / d, n, no, deny, don't allow; anything
    /// else is unclear and means Don't Allow without remembering it.
    static func parse(_ text: String) -> PromptAnswer {
        let answer = String(text.lowercased().map { $0 == "’" ? "'" : $0 }
            .drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        switch answer {
        case "a", "allow", "y", "yes": return .allow
        case "o", "once", "allow once": return .allowOnce
        case "d", "n", "no", "deny", "don't allow", "dont allow": return .deny
        case "": return .dismissed(reason: "no answer")
        default: return .dismissed(reason: "unclear answer")
        }
    }

    private func show(_ text: String, on terminal: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(terminal, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    /// Takes a pending SIGINT, SIGTERM, SIGHUP or SIGQUIT without waiting; nil when none is pending.
    /// Only a blocked signal can be pending, so this never steals one the program did not block.
    private func takePendingStopSignal() -> Int32? {
        var pending = sigset_t()
        sigpending(&pending)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] where sigismember(&pending, signal) == 1 {
            var only = sigset_t()
            sigemptyset(&only)
            sigaddset(&only, signal)
            var noWait = timespec(tv_sec: 0, tv_nsec: 0)
            if sigtimedwait(&only, nil, &noWait) == signal { return signal }
        }
        return nil
    }
}
