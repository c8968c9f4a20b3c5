import AudioFormat
import Foundation
import Testing

/// While hark records, the user can see it: a status line on a terminal, start and end notices
/// otherwise; `--quiet` drops both but never the prompt.
@Suite struct RecordingIndicatorTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    @Test func aTerminalShowsARefreshingRecLineWithDeviceAndElapsedTime() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 5 * 48_000).alsaBytes)
        try rig.startPulseAudio()
        let session = try TerminalSession(harkCommand(["record", "-D", "pacedcap", "-d", "3", "-o", rig.path("t.flac")]), rig: rig)
        let result = session.finish()
        #expect(result.status == 0, "\(result.screen)")
        #expect(result.screen.contains("●") && result.screen.contains(" REC  pacedcap  0:00:02."), "\(result.screen)")
        #expect(result.screen.contains("\r\u{1B}[K"), "the line refreshes in place")
        #expect(result.screen.contains("hark: recorded 3.000 s"))
    }

    /// Sent to the background (a job of an interactive shell), hark records on without drawing:
    /// the line scribbled over the shell's prompt (and, with `stty tostop`, stopped the recording
    /// at its first redraw after `bg`).
    /// Each line drawn leaves the cursor at its start, so an echoed key cannot wrap it.
    @Test func aBackgroundJobRecordsWithoutDrawingTheLine() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 5 * 48_000).alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("bg.flac")
        // `set -m`: job control, so the job gets a process group of its own, not the terminal's.
        let script = "set -m; " + harkCommand(["record", "-D", "pacedcap", "-d", "2", "-o", output]) + " 2>&1 & wait $!"
        let session = try TerminalSession("sh -c " + shellQuoted(script), rig: rig)
        let result = session.finish()
        #expect(result.status == 0, "\(result.screen)")
        #expect(!result.screen.contains(" REC  pacedcap"), "no status line from the background: \(result.screen)")
        try #require(try FLACTools.totalSamples(output) == 2 * 48_000)

        let foreground = try TerminalSession(harkCommand(["record", "-D", "pacedcap", "-d", "1", "-o", rig.path("fg.flac")]), rig: rig)
        let drawn = foreground.finish()
        // Every line drawn ends with "\r", and the next draw, or the clear before the summary,
        // starts with "\r\u{1B}[K", whatever the line holds by then (levels, or not yet).
        #expect(drawn.screen.contains("\u{1B}[31m●\u{1B}[0m REC  pacedcap  0:00:0") && drawn.screen.contains("\r\r\u{1B}[K"),
                "each line drawn ends at its start: \(drawn.screen.debugDescription)")
    }

    @Test func theLineMetersEachChannelInDecibelsAndCountsClips() throws {
        // Left: a 1 kHz sine at half scale (peak -6.0 dBFS, RMS -9.0); right: a full-scale square,
        // every sample of which is clipped.
        var input = Data()
        for frame in 0..<(4 * 48_000) {
            let sine = Int16((0.5 * 32767 * sin(2 * Double.pi * 1000 * Double(frame) / 48_000)).rounded())
            let square: Int16 = frame % 48 < 24 ? 32767 : -32767
            withUnsafeBytes(of: sine.littleEndian) { input.append(contentsOf: $0) }
            withUnsafeBytes(of: square.littleEndian) { input.append(contentsOf: $0) }
        }
        let rig = try ALSATestRig(input: input)
        try rig.startPulseAudio()
        let session = try TerminalSession(harkCommand(["record", "-D", "pacedcap", "-d", "2", "-o", rig.path("m.flac")]), rig: rig,
                                          columns: 160)
        let result = session.finish()
        #expect(result.status == 0, "\(result.screen)")
        #expect(result.screen.contains(" -6.0  -9.0  R "), "\(result.screen)")
        #expect(result.screen.contains("  0.0   0.0  clip "), "\(result.screen)")
        let clips = result.screen.matches(of: /clip (\d+)/).compactMap { Int($0.1) }
        #expect(clips.max() ?? 0 >= 48_000, "clips are counted over the whole recording: \(clips)")
        #expect(clips == clips.sorted(), "the clip count only grows")
    }

    @Test func elsewhereOnlyTheStartAndEndNoticesAppear() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes)
        let result = try runHark(["record", "-D", "filecap", "-d", "1", "-o", rig.path("n.flac")], rig: rig)
        #expect(result.status == 0)
        #expect(result.errorLines.count == 2, "\(result.standardError)")
        #expect(result.errorLines.first?.hasPrefix("hark: ● recording from 'filecap'") == true)
        #expect(result.errorLines.last?.hasPrefix("hark: recorded 1.000 s, 48000 frames") == true)
        #expect(!result.standardError.contains("\r"))
    }

    @Test func quietDropsTheNoticesButNeverThePrompt() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes, grantMicrophone: false)
        let session = try TerminalSession(harkCommand(["record", "-q", "-D", "filecap", "-d", "1", "-o", rig.path("q.flac")]), rig: rig)
        #expect(session.waitFor(promptQuestion), "--quiet still asks")
        session.type("o\n")
        let result = session.finish()
        #expect(result.status == 0)
        #expect(!result.screen.contains("hark: ● recording") && !result.screen.contains("hark: recorded") && !result.screen.contains("REC"))

        try FileManager.default.removeItem(atPath: rig.path("q.flac"))
        #expect(try runHark(["permissions", "grant", "microphone"], rig: rig).status == 0)
        let piped = try runHark(["record", "-q", "-D", "filecap", "-d", "1", "-o", rig.path("q.flac")], rig: rig)
        #expect(piped.status == 0 && piped.standardError.isEmpty)
    }
}
