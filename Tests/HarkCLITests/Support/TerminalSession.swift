import Foundation

/// Runs a shell command on a real pseudo-terminal (through util-linux `script`), so the program
/// has a controlling terminal and `/dev/tty` is that terminal. The test reads what the terminal
/// shows and types into it, as a user would.
final class TerminalSession {
    private let process = Process()
    private let keyboard = Pipe()
    private let screenFile: URL
    private let start = Date()

    /// `columns` sets the terminal's width (`script` gives its pty the width of the terminal it
    /// runs in, which tests do not have).
    init(_ command: String, rig: ALSATestRig, columns: Int? = nil) throws {
        screenFile = rig.directory.appendingPathComponent("screen-\(UUID().uuidString.prefix(8))")
        _ = FileManager.default.createFile(atPath: screenFile.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: findOnPath("script") ?? "/usr/bin/script")
        // -q: no banners; -f: flush every write, so the screen can be polled; -e: return the command's status.
        // `exec` replaces the shell with the command, so a Ctrl-C typed at the terminal reaches only
        // the program under test; a shell left waiting (dash keeps one when there is a
        // redirection) would die of the SIGINT itself and make `script` report 130.
        let width = columns.map { "stty cols \($0); " } ?? ""
        process.arguments = ["-q", "-f", "-e", "-c", width + "exec " + command, "/dev/null"]
        var environment = rig.environment
        environment["SHELL"] = "/bin/sh"  // what `script` runs the command with; CI may not set it
        // A terminal that redraws, with colour, whatever the machine running the tests has.
        environment["TERM"] = "xterm"
        environment.removeValue(forKey: "NO_COLOR")
        process.environment = environment
        process.standardInput = keyboard
        process.standardOutput = try FileHandle(forWritingTo: screenFile)
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    /// The `script` process that holds the terminal. It stops itself when the program on the
    /// terminal is stopped (job control), so a test that stops the program continues both.
    var scriptProcessIdentifier: pid_t { process.processIdentifier }

    /// Everything the terminal has shown so far.
    var screen: String { (try? String(contentsOf: screenFile, encoding: .utf8)) ?? "" }

    /// Waits until the screen shows `text`; false after `timeout` seconds.
    func waitFor(_ text: String, timeout: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if screen.contains(text) { return true }
            if !process.isRunning { return screen.contains(text) }
            usleep(20_000)
        }
        return false
    }

    /// Types `keys` (a line needs its "\n"; "\u{03}" is Ctrl-C, "\u{04}" is Ctrl-D).
    func type(_ keys: String) {
        keyboard.fileHandleForWriting.write(Data(keys.utf8))
    }

    /// Waits for the command to end; returns its status and the whole screen.
    func finish(timeout: Double = 30) -> (status: Int32, screen: String, seconds: Double) {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        // Continued first: a stopped `script` (it stops itself with a stopped child) would keep a
        // SIGTERM pending for ever, and this wait with it.
        if process.isRunning {
            kill(process.processIdentifier, SIGCONT)
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        try? keyboard.fileHandleForWriting.close()
        return (process.terminationStatus, screen, Date().timeIntervalSince(start))
    }
}

/// The text of the consent prompt's question line.
let promptQuestion = "(a/o/d): "

/// Quotes `word` for a POSIX shell.
func shellQuoted(_ word: String) -> String { "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'" }

/// A shell command running hark with `arguments`.
func harkCommand(_ arguments: [String]) -> String {
    ([harkBinary.path] + arguments).map(shellQuoted).joined(separator: " ")
}

/// Waits until process `pid` is stopped (state T in /proc/PID/stat); false after `timeout` seconds
/// or once it is gone.
func waitUntilStopped(_ pid: pid_t, timeout: Double) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return false }
        // "PID (comm) S …": the state follows the command's closing parenthesis and a space.
        if stat[close...].dropFirst(2).first == "T" { return true }
        usleep(5_000)
    }
    return false
}
