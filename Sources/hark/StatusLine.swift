import Recorder
#if canImport(Glibc)
import Glibc
#endif

/// What the user sees while hark records: on a terminal, one refreshing line on stderr
/// (● REC, device, elapsed time); elsewhere, nothing between the start and end notices.
struct StatusLine {
    let device: String
    let isEnabled: Bool
    private var lastDrawn = -1

    init(device: String, quiet: Bool) {
        self.device = device
        isEnabled = !quiet && isatty(STDERR_FILENO) == 1
    }

    /// Redraws at most four times a second (only when the shown tenths change).
    mutating func update(_ progress: RecordingProgress) {
        guard isEnabled else { return }
        let tenths = Int(progress.seconds * 10)
        guard tenths / 2 != lastDrawn / 2 else { return }
        lastDrawn = tenths
        let seconds = tenths / 10
        let clock = "\(seconds / 3600):\(SecondsText.zeroPadded(seconds / 60 % 60, width: 2)):\(SecondsText.zeroPadded(seconds % 60, width: 2))"
        Console.raw("\r\u{1B}[K\u{1B}[31m●\u{1B}[0m REC  \(device)  \(clock).\(tenths % 10)  \(progress.format)")
    }

    /// Clears the line before the summary is printed.
    func clear() {
        if isEnabled { Console.raw("\r\u{1B}[K") }
    }
}
