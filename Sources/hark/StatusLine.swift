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
/// width in columns (a CJK character takes two), so it never wraps (a wrapped line cannot be
/// redrawn in place), and the cursor is left at its start: a key the terminal echoes (Ctrl-C's
/// `^C`, Ctrl-Z's `^Z`) lands on the line, which the next redraw or the summary clears, instead of
/// wrapping it onto a second row that nothing clears. Not on a `TERM=dumb` terminal (it cannot
/// redraw a line), without colour under `NO_COLOR` (no-color.org), and not drawn while hark is a
/// background job (`bg`): it would scribble over the shell, or, with `stty tostop`, stop the
/// recording.
struct StatusLine {
    let device: String
    let isEnabled: Bool
    private let usesColour: Bool
    private var lastDrawnTenth = -1
    /// Whether a line is on the terminal (drawn, and not cleared since).
    private var isShown = false
    private var clippedSamples = 0
    private var lastLevels: LevelWindow?

    init(device: String, quiet: Bool) {
        self.device = device.shownOnTerminal
        isEnabled = !quiet && isatty(STDERR_FILENO) == 1 && Self.canRedraw(term: Self.environment("TERM"))
        usesColour = Self.usesColour(noColor: Self.environment("NO_COLOR"))
    }

    /// Whether a terminal of this `TERM` can redraw a line in place (a dumb one cannot).
    static func canRedraw(term: String?) -> Bool { term != "dumb" }

    /// Colour unless `NO_COLOR` is set to anything but the empty string (no-color.org).
    static func usesColour(noColor: String?) -> Bool { noColor.map(\.isEmpty) ?? true }

    private static func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

    /// Whether hark is the terminal's foreground job (not sent to the background with `bg`). A
    /// terminal that is not hark's controlling one (`2>/dev/pts/3`, `setsid`) has no foreground
    /// job to be (tcgetpgrp fails): drawn there, as nothing else writes to it through hark's job.
    private static var isInForeground: Bool {
        let foreground = tcgetpgrp(STDERR_FILENO)
        return foreground == -1 || foreground == getpgrp()
    }

    /// Redraws at most ten times a second (when the shown tenth changes).
    mutating func update(_ progress: RecordingProgress) {
        guard isEnabled, Self.isInForeground else { return }
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
        let (red, yellow, plain) = usesColour ? ("\u{1B}[31m", "\u{1B}[33m", "\u{1B}[0m") : ("", "", "")
        var line = "\(red)●\(plain) REC  \(device)  \(clock)  \(Self.bytesText(progress.bytesWritten))"
        if let sound = progress.sound {
            // Armed: the level the trigger compares, so the user can see where to set it.
            line = sound.isArmed
                ? "\(yellow)◌\(plain) ARMED  \(device)  \(clock)  level \(Self.decibels(sound.level))"
                : line + "  level \(Self.decibels(sound.level))"
            if sound.segments > 0 { line += "  seg \(sound.segments)" }
        }
        if let levels = lastLevels {
            line += "  " + Self.meterText(levels) + "  clip \(clippedSamples)"
        }
        Console.raw("\r\u{1B}[K" + Self.cut(line, toColumns: Self.terminalColumns()) + "\r")
        isShown = true
    }

    /// Clears the line before the summary is printed: only one that is there, and not from the
    /// background, where it would wipe what the user is typing at the shell.
    mutating func clear() {
        guard isEnabled, isShown, Self.isInForeground else { return }
        Console.raw("\r\u{1B}[K")
        isShown = false
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

    /// `line` cut to fit `columns` terminal columns; escape sequences take none and are kept.
    static func cut(_ line: String, toColumns columns: Int) -> String {
        var result = ""
        var visible = 0
        var inEscape = false
        for character in line {
            if character == "\u{1B}" { inEscape = true }
            if !inEscape {
                let width = Self.columns(of: character)
                guard visible + width <= columns - 1 else { break }  // the last column would wrap on some terminals
                visible += width
            }
            result.append(character)
            if inEscape && character.isLetter { inEscape = false }
        }
        return result
    }

    /// The columns a character takes on a terminal: two for East Asian wide and fullwidth ones
    /// (CJK, Hangul, fullwidth forms) and emoji shown as emoji, else one: close to what wcwidth()
    /// counts (which needs a UTF-8 locale set, which hark does not set).
    static func columns(of character: Character) -> Int {
        guard let first = character.unicodeScalars.first, first.value >= 0x1100 else { return 1 }
        if first.properties.isEmojiPresentation { return 2 }
        let scalar = first.value
        let wide: [ClosedRange<UInt32>] = [
            0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
            0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
        ]
        return wide.contains { $0.contains(scalar) } ? 2 : 1
    }

    /// The terminal's width from TIOCGWINSZ, or 80.
    private static func terminalColumns() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }
}
