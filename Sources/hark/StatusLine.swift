import Recorder
#if canImport(Glibc)
import Glibc
#endif

/// What the user sees while hark records: on a terminal, one refreshing line on stderr; elsewhere
/// (a log file, a pipe) nothing between the start and end notices, so logs stay clean.
///
///     ● REC  default  0:01:23.4  2.31 MB  L ███████▒▒░░░ -8.1 -15.3  R ██████▒░░░░░ -9.0 -16.2  clip 0
///
/// Sound-activated (`--start-above`), it says whether hark is waiting ("◌ ARMED") or recording,
/// the level `--start-above` is compared with (the last 50 ms block's loudest channel), and the
/// segments so far.
///
/// Per channel, a bar from -60 to 0 dBFS (solid up to the RMS, shaded up to the peak), then the
/// peak and RMS in dBFS over the last tenth of a second. With more than two channels the bars are
/// numbered and shorter, and the figures are left out to fit. The line is cut to the terminal's
/// width, so it never wraps (a wrapped line cannot be redrawn in place).
struct StatusLine {
    let device: String
    let isEnabled: Bool
    private var lastDrawnTenth = -1
    private var clippedSamples = 0
    private var lastLevels: LevelWindow?

    init(device: String, quiet: Bool) {
        self.device = device
        isEnabled = !quiet && isatty(STDERR_FILENO) == 1
    }

    /// Redraws at most ten times a second (when the shown tenth changes).
    mutating func update(_ progress: RecordingProgress) {
        guard isEnabled else { return }
        if let levels = progress.levels {
            clippedSamples += levels.clippedSamples
            lastLevels = levels
        }
        let tenths = Int(progress.seconds * 10)
        guard tenths != lastDrawnTenth else { return }
        lastDrawnTenth = tenths
        let seconds = tenths / 10
        let clock = "\(seconds / 3600):\(SecondsText.zeroPadded(seconds / 60 % 60, width: 2))"
            + ":\(SecondsText.zeroPadded(seconds % 60, width: 2)).\(tenths % 10)"
        var line = "\u{1B}[31m●\u{1B}[0m REC  \(device)  \(clock)  \(Self.bytesText(progress.bytesWritten))"
        if let sound = progress.sound {
            // Armed: the level the trigger compares, so the user can see where to set it.
            line = sound.isArmed
                ? "\u{1B}[33m◌\u{1B}[0m ARMED  \(device)  \(clock)  level \(Self.decibels(sound.level))"
                : line + "  level \(Self.decibels(sound.level))"
            if sound.segments > 0 { line += "  seg \(sound.segments)" }
        }
        if let levels = lastLevels {
            line += "  " + Self.meterText(levels) + "  clip \(clippedSamples)"
        }
        Console.raw("\r\u{1B}[K" + Self.cut(line, toColumns: Self.terminalColumns()))
    }

    /// Clears the line before the summary is printed.
    func clear() {
        if isEnabled { Console.raw("\r\u{1B}[K") }
    }

    static func meterText(_ levels: LevelWindow) -> String {
        let compact = levels.channels.count > 2
        let names = levels.channels.count == 2 ? ["L", "R"] : levels.channels.indices.map { String($0 + 1) }
        return zip(names, levels.channels).map { name, level in
            let peak = ChannelLevel.dBFS(level.peak)
            let rms = ChannelLevel.dBFS(level.rms)
            let bar = bar(peak: peak, rms: rms, width: compact ? 6 : 12)
            return compact ? "\(name) \(bar)" : "\(name) \(bar) \(decibels(peak)) \(decibels(rms))"
        }.joined(separator: "  ")
    }

    /// -60…0 dBFS as `width` cells: █ up to the RMS, ▒ up to the peak, ░ beyond.
    static func bar(peak: Double, rms: Double, width: Int) -> String {
        func cells(_ decibels: Double) -> Int {
            guard decibels.isFinite else { return 0 }
            return max(0, min(width, Int(((decibels + 60) / 60 * Double(width)).rounded())))
        }
        let solid = cells(rms)
        let shaded = max(cells(peak) - solid, 0)
        return String(repeating: "█", count: solid) + String(repeating: "▒", count: shaded)
            + String(repeating: "░", count: width - solid - shaded)
    }

    /// "-12.3", or "-inf" for silence; one decimal, fixed width of five.
    static func decibels(_ value: Double) -> String {
        guard value.isFinite else { return " -inf" }
        let tenths = Int((value * 10).rounded())
        let text = (tenths < 0 ? "-" : "") + "\(abs(tenths) / 10).\(abs(tenths) % 10)"
        return String(repeating: " ", count: max(0, 5 - text.count)) + text
    }

    /// Bytes as people read them: "812 kB", "2.31 MB", "1.02 GB" (decimal units, as file managers).
    static func bytesText(_ bytes: Int) -> String {
        switch bytes {
        case ..<1_000_000: "\(bytes / 1000) kB"
        case ..<1_000_000_000: "\(bytes / 1_000_000).\(SecondsText.zeroPadded(bytes / 10_000 % 100, width: 2)) MB"
        default: "\(bytes / 1_000_000_000).\(SecondsText.zeroPadded(bytes / 10_000_000 % 100, width: 2)) GB"
        }
    }

    /// `line` cut to `columns` visible characters; escape sequences take no columns and are kept.
    static func cut(_ line: String, toColumns columns: Int) -> String {
        var result = ""
        var visible = 0
        var inEscape = false
        for character in line {
            if character == "\u{1B}" { inEscape = true }
            if !inEscape {
                guard visible < columns - 1 else { break }  // the last column would wrap on some terminals
                visible += 1
            }
            result.append(character)
            if inEscape && character.isLetter { inEscape = false }
        }
        return result
    }

    /// The terminal's width from TIOCGWINSZ, or 80.
    private static func terminalColumns() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}
