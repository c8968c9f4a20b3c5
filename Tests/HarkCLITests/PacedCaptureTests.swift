import AudioFormat
import Foundation
import Testing

/// Real-time capture: ALSA's file plugin over a private PulseAudio null sink returns known PCM at
/// real-time pace, bit-exact (DESIGN.md §6).
@Suite struct PacedCaptureTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    @Test func threeSecondsTakeRealTimeAndComeBackBitExact() throws {
        let signal = TestSignal(format: Self.format, frames: 5 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        // Two 0.2 s recordings measure the fixed cost (start, connecting, stream start, finalize,
        // exit); the smaller is the baseline, as load can only add to it. (The rig's server is
        // warm: no run waits for a cold stream start, which took 0–2 s by chance.)
        var shortRuns: [Double] = []
        for name in ["first.flac", "short.flac"] {
            let short = try runHark(["record", "-D", "pacedcap", "-d", "0.2", "-o", rig.path(name)], rig: rig)
            #expect(short.status == 0, "\(short.standardError)")
            shortRuns.append(short.wallSeconds)
        }
        let baseline = try #require(shortRuns.min())
        let result = try runHark(["record", "-D", "pacedcap", "-d", "3", "-o", rig.path("paced.flac")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        // Paced: never faster than real time (an unpaced device would take a fraction of a second:
        // `wallSeconds >= 2.9` is that promise), and the 2.8 s more audio costs not much more than
        // 2.8 s more (a stalling device would take longer). Above 2.8 s, 0.8 s of slack for
        // scheduling, scaled by TestLoad.slowdown: a sanitizer slows the fixed cost of the long run
        // as much as the short ones', but makes it vary more. No lower bound on `extra`: a loaded
        // machine slows the short runs' start-up as much as the long one's (seen: 0.2 s runs taking
        // 1.6–1.8 s under ThreadSanitizer and stress-ng), which says nothing about pacing.
        let extra = result.wallSeconds - baseline
        let upper = 2.8 + 0.8 * TestLoad.slowdown
        print("paced: 3 s took \(result.wallSeconds) s, 0.2 s took \(shortRuns) s; extra \(extra) s (bound < \(upper) s)")
        #expect(result.wallSeconds >= 2.9, "took \(result.wallSeconds) s")
        #expect(extra < upper, "3 s took \(result.wallSeconds) s, 0.2 s took \(shortRuns) s")
        let decoded = try FLACTools.decode(rig.path("paced.flac"), bitsPerSample: 16)
        expectSameElements(decoded[...], signal.prefix(frames: 3 * 48_000))
    }

    @Test func sigintMidRecordingFinalizesTheFile() throws {
        let signal = TestSignal(format: Self.format, frames: 12 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("interrupted.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        recording.send(SIGINT)
        let result = recording.wait(timeout: 10)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("stopped by SIGINT"), "\(result.standardError)")
        let total = try expectFinishedPrefix(output, of: signal)
        #expect(result.standardError.contains("\(total) frames"))
    }

    /// SIGQUIT too (a terminal's Ctrl-\): it finished nothing and printed a backtrace from
    /// Swift's crash handler, and the recording went on, short of the audio lost meanwhile.
    @Test func sigtermSighupAndSigquitStopCleanlyToo() throws {
        for (stopSignal, name) in [(SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP"), (SIGQUIT, "SIGQUIT")] {
            let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 10 * 48_000).alsaBytes)
            try rig.startPulseAudio()
            let recording = try startHark(["record", "-D", "pacedcap", "-o", "-"], rig: rig)
            try OutputGrowth.waitForFLACAudio(try #require(OutputGrowth.standardOutputFile(in: rig)), seconds: 1)
            recording.send(stopSignal)
            let result = recording.wait(timeout: 10)
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardError.contains("; stopped by \(name)"), "\(result.standardError)")
            #expect(!result.standardError.contains("crashed"), "\(result.standardError)")
            let path = rig.path("stream.flac")
            try result.standardOutput.write(to: URL(fileURLWithPath: path))
            #expect(try FLACTools.test(path).status == 0)
        }
    }

    @Test func rateTheDeviceRefusesIsReportedWithWhatItSupports() throws {
        let rig = try ALSATestRig(input: Data())
        try rig.startPulseAudio()
        // `pulse` records the rig's default source, its sink's monitor: system audio.
        #expect(try runHark(["permissions", "grant", "systemAudio"], rig: rig).status == 0)
        let result = try runHark(["record", "-D", "pulse", "-r", "700000", "-d", "1", "-o", rig.path("x.flac")], rig: rig)
        #expect(result.status == 69)
        #expect(result.errorLines.count == 1, "\(result.standardError)")
        #expect(result.standardError.contains("does not support rate 700000 Hz; it supports"), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: rig.path("x.flac")))
    }

    @Test func sampleFormatTheDeviceRefusesIsReportedWithWhatItSupports() throws {
        // ALSA's `linear` plugin converts integer formats only: it refuses float.
        let rig = try ALSATestRig(input: Data(), extraConfiguration: #"pcm.linearonly { type linear; slave { pcm "null"; format S16_LE } }"#)
        let result = try runHark(["record", "-D", "linearonly", "-f", "FLOAT_LE", "-d", "1", "-o", rig.path("x.flac")], rig: rig)
        #expect(result.status == 69)
        #expect(result.errorLines == ["hark: capture device 'linearonly' does not support sample format FLOAT_LE; it supports S16_LE, S24_LE, S32_LE"],
                "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: rig.path("x.flac")))
    }

    @Test func deviceThatVanishesEndsTheRecordingWithAFinishedFile() throws {
        let signal = TestSignal(format: Self.format, frames: 12 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("lost.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        rig.pulse?.stop()
        let result = recording.wait(timeout: 10)
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.errorLines.last?.hasPrefix("hark: capture device lost") == true, "\(result.standardError)")
        try expectFinishedPrefix(output, of: signal)
    }
}
