import AudioFormat
import Foundation
import Testing

/// Audio lost before hark could read it, produced for real: the whole process is stopped
/// (SIGSTOP) while PulseAudio keeps recording for it. PulseAudio holds about 4 MiB per stream and
/// then drops the oldest audio without telling the client, so at 192 kHz, 8 channels, 32 bits
/// (6 MiB/s) a 3 s stop loses more than a second. The file plugin in front of PulseAudio reads
/// the known input in order, so whatever is missing in time is not missing in content: the input
/// comes back bit-exact, and `--pad-overruns` must put exactly the reported silence into it.
@Suite(.serialized) struct OverrunTests {
    static let format = PCMFormat(sampleFormat: .s32LE, channels: 8, sampleRate: 192_000)
    /// Long enough after the 3 s stop for the loss to be found before the end even on a loaded
    /// machine (it settles a few periods after the backlog is read).
    static let seconds = 8
    static var frames: Int { seconds * format.sampleRate }

    /// Records `seconds` paced, stopping the process for 3 s once audio flows; returns the result,
    /// the decoded samples, the signal, the wall-clock seconds from the first audio to the end, and
    /// how long the process was really stopped (from just before SIGSTOP to just after SIGCONT: a
    /// loaded machine may oversleep the 3 s).
    func recordWithAStop(_ extraArguments: [String])
        throws -> (result: ToolResult, decoded: [Int32], signal: TestSignal, sinceFlowing: Double, stopped: Double) {
        let signal = TestSignal(format: Self.format, frames: Self.frames + Self.format.sampleRate)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("stopped.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-r", "192000", "-c", "8", "-f", "S32_LE",
                                       "-d", "\(Self.seconds)", "-o", output] + extraArguments, rig: rig)
        // Stop it once audio flows (PulseAudio may take a moment to start delivering).
        try OutputGrowth.waitUntil(output, exceeds: 1_000_000)
        let flowing = Date()
        usleep(500_000)
        let stopping = Date()
        recording.send(SIGSTOP)
        usleep(3_000_000)
        recording.send(SIGCONT)
        let stopped = Date().timeIntervalSince(stopping)
        let result = recording.wait(timeout: 30)
        let sinceFlowing = Date().timeIntervalSince(flowing)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
        return (result, try FLACTools.decode(output, bitsPerSample: 32), signal, sinceFlowing, stopped)
    }

    /// The loss a stop of `stopped` seconds must report: at most the stop itself (nothing is lost
    /// while hark reads), at least all but 2.5 s of it (PulseAudio's 4 MiB, 0.68 s here, and the
    /// device's 0.5 s buffer are what can be kept; a 3 s stop loses more than half a second).
    /// Relative to the measured stop, so an oversleep of the 3 s on a loaded machine cannot fail it.
    static func plausibleLoss(milliseconds: Int, stopped: Double) -> Bool {
        Double(milliseconds) >= (stopped - 2.5) * 1000 && Double(milliseconds) <= stopped * 1000
    }

    /// "N overruns (M ms lost…" from the summary line.
    func lossReport(_ standardError: String) throws -> (overruns: Int, milliseconds: Int) {
        let match = try #require(standardError.firstMatch(of: /; (\d+) overruns? \((\d+) ms lost/), "\(standardError)")
        return (Int(match.1)!, Int(match.2)!)
    }

    @Test func audioTheSoundServerDroppedIsReportedInMilliseconds() throws {
        let (result, decoded, signal, seconds, stopped) = try recordWithAStop([])
        let report = try lossReport(result.standardError)
        print("OverrunTests: stopped \(stopped) s, \(report.overruns) overruns, \(report.milliseconds) ms lost")
        #expect(report.overruns >= 1, "\(result.standardError)")
        #expect(Self.plausibleLoss(milliseconds: report.milliseconds, stopped: stopped), "stopped \(stopped) s: \(result.standardError)")
        // Nothing padded: the file holds the input, in order, and took the lost time longer.
        expectSameElements(decoded, signal.prefix(frames: Self.frames))
        // (Audio flowed a fraction of a second after the start.)
        #expect(seconds >= Double(Self.seconds) + Double(report.milliseconds) / 1000 - 1, "took \(seconds) s")
    }

    /// The promise of `--pad-overruns`, whatever the schedule: every lost millisecond is either
    /// in the file as silence, at the place the loss was found, or reported as found too late to
    /// pad (a loss found after a `-d` recording's time was up: the file then ends in silence); the
    /// file is exactly `-d` long; the audio around the silence is the input, in order. How late
    /// the loss is found depends on the machine's load, so the test checks that the parts add up,
    /// not when they were found. The second case's ring (1.5 s) is smaller than most losses here: the
    /// silence does not go through it.
    @Test(arguments: [[String](), ["--ring-seconds", "1.5"]])
    func padOverrunsPutsExactlyTheReportedSilenceIn(ringArguments: [String]) throws {
        let (result, decoded, signal, _, stopped) = try recordWithAStop(["--pad-overruns"] + ringArguments)
        let report = try lossReport(result.standardError)
        #expect(Self.plausibleLoss(milliseconds: report.milliseconds, stopped: stopped), "stopped \(stopped) s: \(result.standardError)")
        let parts = try #require(
            result.standardError.firstMatch(of: /ms lost, (\d+) ms padded with silence(?:, (\d+) ms found too late to pad)?\)/),
            "\(result.standardError)")
        let padded = Int(parts.1)!
        let tooLate = parts.2.map { Int($0)! } ?? 0
        // Each part is rounded up to whole milliseconds on its own.
        #expect((report.milliseconds...report.milliseconds + 1).contains(padded + tooLate), "\(result.standardError)")
        #expect(result.standardError.contains(", 0 frames dropped;"), "\(result.standardError)")
        // The timeline is true: -d gives exactly -d of file, the silence counted in it.
        #expect(decoded.count == Self.frames * 8)
        // The input, then one run of silence as long as the report says, then the input again
        // where it left off (up to the end of the file when part of the loss came too late).
        let channels = Self.format.channels
        let silentFrame = { (frame: Int) in decoded[frame * channels ..< (frame + 1) * channels].allSatisfy { $0 == 0 } }
        let gapStart = try #require((0..<Self.frames).first(where: silentFrame), "no silence in the file")
        var gapEnd = gapStart
        while gapEnd < Self.frames && silentFrame(gapEnd) { gapEnd += 1 }
        let gapMilliseconds = Double(gapEnd - gapStart) * 1000 / Double(Self.format.sampleRate)
        #expect(abs(gapMilliseconds - Double(padded)) <= 1, "gap \(gapMilliseconds) ms, \(result.standardError)")
        if tooLate > 0 { #expect(gapEnd == Self.frames, "silence that came too late ends the file") }
        expectSameElements(decoded[..<(gapStart * channels)], signal.prefix(frames: gapStart))
        let rest = Self.frames - gapEnd
        expectSameElements(decoded[(gapEnd * channels)...], signal.samples[(gapStart * channels) ..< ((gapStart + rest) * channels)])
    }

    /// With several outputs each has its own ring and its own schedule of silence: the gap must
    /// land at the same place of each output's timeline, so a raw copy recorded beside the FLAC
    /// file holds the same samples, silence included.
    @Test func padOverrunsPadsEveryOutputAlike() throws {
        let copy = FileManager.default.temporaryDirectory
            .appendingPathComponent("hark-overrun-copy-\(UUID().uuidString.prefix(8)).raw").path
        defer { try? FileManager.default.removeItem(atPath: copy) }
        let (result, decoded, _, _, _) = try recordWithAStop(["--pad-overruns", "-o", copy])
        #expect(result.standardError.contains("ms padded with silence"), "\(result.standardError)")
        #expect(result.standardError.contains("recorded 8.000 s to 2 outputs"), "\(result.standardError)")
        let raw = try Data(contentsOf: URL(fileURLWithPath: copy))
        #expect(raw.count == Self.frames * Self.format.bytesPerFrame)
        expectSameElements(decodeRawSamples(raw, bitsPerSample: 32), decoded)
    }

    @Test func aProcessStoppedLongerThanTheStallTimeoutIsNotADeadDevice() throws {
        // Before, a 6 s stop looked like a device that had delivered nothing for 5 s (exit 74).
        let signal = TestSignal(format: PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000), frames: 12 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("stopped.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "9", "--ring-seconds", "12", "-o", output], rig: rig)
        try OutputGrowth.waitUntil(output, exceeds: 100_000)
        recording.send(SIGSTOP)
        usleep(6_000_000)
        recording.send(SIGCONT)
        let result = recording.wait(timeout: 30)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("0 overruns (0 ms lost), 0 frames dropped; ") && result.standardError.contains("; duration reached"),
                "\(result.standardError)")
        #expect(try expectFinishedPrefix(output, of: signal) == 9 * 48_000)
    }
}
