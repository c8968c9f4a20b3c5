import AudioFormat
import Foundation
import Testing

/// The loudness hark measures as it records (EBU R128) against ffmpeg's `ebur128`
/// filter on the same audio: in the summary line, the access log, FLAC's ReplayGain tags, Opus's
/// R128_TRACK_GAIN and WAV's bext chunk, within 0.1 LU (plus the 0.05 of ffmpeg's one decimal).
@Suite struct LoudnessOutputTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    /// ffmpeg's integrated loudness, range and true peak for `path` (any format it reads), or nil
    /// when ffmpeg is missing (the test then says so and checks nothing against it). Without
    /// `framelog=quiet`: with it, ffmpeg 5.1's summary reads 0.0 LUFS and -inf dBFS for any input.
    static func ffmpegLoudness(_ arguments: [String]) throws -> (integrated: Double, range: Double, truePeak: Double)? {
        guard findOnPath("ffmpeg") != nil else {
            print("LoudnessOutputTests: ffmpeg is not installed (scripts/install-deps installs it); not compared")
            return nil
        }
        let result = try runTool("ffmpeg", ["-nostats", "-hide_banner"] + arguments + ["-af", "ebur128=peak=true", "-f", "null", "-"])
        let summary = try #require(result.standardError.components(separatedBy: "Summary:").last)
        func value(_ label: String) -> Double? {
            guard let line = summary.split(separator: "\n").first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }) else { return nil }
            return line.split(separator: " ").dropFirst().lazy.compactMap { Double($0) }.first
        }
        guard let integrated = value("I:"), let range = value("LRA:"), let peak = value("Peak:") else {
            throw TestRigError("cannot read ffmpeg's summary: \(summary)")
        }
        return (integrated, range, peak)
    }

    @Test func flacOpusAndWAVCarryTheLoudnessFFmpegMeasures() throws {
        let signal = TestSignal(format: Self.format, frames: 21 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let result = try runHark(["record", "-D", "filecap", "-d", "20", "-o", rig.path("l.flac"), "-o", rig.path("l.opus"),
                                  "-o", rig.path("l.wav")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let tags = try FLACTools.tags(rig.path("l.flac"))
        let gainText = try #require(tags.first { $0.hasPrefix("REPLAYGAIN_TRACK_GAIN=") }?.dropFirst("REPLAYGAIN_TRACK_GAIN=".count))
        #expect(gainText.hasSuffix(" dB") && gainText.count == 9, "fixed width: \(gainText)")
        let gain = try #require(Double(gainText.dropLast(3)))
        let peak = try #require(tags.first { $0.hasPrefix("REPLAYGAIN_TRACK_PEAK=") }.flatMap { Double($0.dropFirst("REPLAYGAIN_TRACK_PEAK=".count)) })
        let opusGainText = try OpusTools.tags(rig.path("l.opus")).comments.first { $0.hasPrefix("R128_TRACK_GAIN=") }
        let opusGain = try #require(opusGainText.flatMap { Int($0.dropFirst("R128_TRACK_GAIN=".count)) })
        #expect(try OpusTools.info(rig.path("l.opus")).isClean, "the OpusTags page's CRC was computed again")
        let integrated = -18 - gain
        // The same audio went to every output: the same loudness, Q7.8 dB to −23 LUFS in Opus.
        #expect(abs(Double(opusGain) / 256 - (-23 - integrated)) < 0.01, "R128 \(opusGain) vs \(integrated) LUFS")
        // WAV: bext version 2's LoudnessValue and MaxTruePeakLevel, in hundredths.
        let wav = try Data(contentsOf: URL(fileURLWithPath: rig.path("l.wav")))
        let bext = try #require(wav.range(of: Data("bext".utf8))).upperBound + 4
        func int16(_ offset: Int) -> Int { Int(Int16(bitPattern: UInt16(wav[bext + offset]) | UInt16(wav[bext + offset + 1]) << 8)) }
        #expect(wav[bext + 346] == 2)
        #expect(abs(Double(int16(412)) / 100 - integrated) <= 0.011, "bext \(int16(412)) vs \(integrated)")
        #expect(abs(Double(int16(416)) / 100 - 20 * log10(peak)) <= 0.011, "bext true peak \(int16(416)) vs \(peak)")
        // The summary line and the access log say the same.
        let summaryFigure = String(format: "%.1f LUFS", integrated)
        #expect(result.standardError.contains(summaryFigure), "\(summaryFigure) in \(result.standardError)")
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8)
        let entry = try #require(log.split(separator: "\n").last.flatMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        let logged = try #require(entry["loudnessLUFS"] as? Double)
        #expect(abs(logged - integrated) < 0.01, "log \(logged) vs \(integrated)")

        guard let reference = try Self.ffmpegLoudness(["-i", rig.path("l.flac")]) else { return }
        print("LoudnessOutputTests: hark \(integrated) LUFS, true peak \(20 * log10(peak)) dBTP; ffmpeg \(reference)")
        #expect(abs(integrated - reference.integrated) <= 0.15, "hark \(integrated) vs ffmpeg \(reference.integrated) LUFS")
        #expect(abs(20 * log10(peak) - reference.truePeak) <= 0.25, "hark \(20 * log10(peak)) vs ffmpeg \(reference.truePeak) dBTP")
        // 20 s of music-like audio has a loudness range: the log must carry it.
        let range = try #require(entry["loudnessRangeLU"] as? Double, "\(entry)")
        #expect(abs(range - reference.range) <= 0.15, "hark range \(range) vs ffmpeg \(reference.range) LU")
    }

    @Test func stdoutGetsNoTagsButTheSummaryHasTheFigures() throws {
        let signal = TestSignal(format: Self.format, frames: 6 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let result = try runHarkIntoPipe(["record", "-D", "filecap", "-d", "5", "-o", "-"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let stream = rig.path("stream.flac")
        try result.standardOutput.write(to: URL(fileURLWithPath: stream))
        #expect(try !FLACTools.tags(stream).contains { $0.hasPrefix("REPLAYGAIN") }, "a stream is never rewritten: no placeholders")
        #expect(result.standardError.contains(" LUFS, range "), "\(result.standardError)")
    }

    @Test func noLoudnessMeasuresNothingAndReservesNoTags() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 3 * 48_000).alsaBytes)
        let result = try runHark(["record", "-D", "filecap", "-d", "2", "--no-loudness", "-o", rig.path("n.flac"), "-o", rig.path("n.opus")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(!result.standardError.contains("LUFS") && !result.standardError.contains("dBTP"), "\(result.standardError)")
        #expect(try !FLACTools.tags(rig.path("n.flac")).contains { $0.hasPrefix("REPLAYGAIN") })
        #expect(try !OpusTools.tags(rig.path("n.opus")).comments.contains { $0.hasPrefix("R128") })
        #expect(try !String(contentsOfFile: rig.accessLogFile, encoding: .utf8).contains("loudnessLUFS"))
    }

    /// Below 3400 Hz EBU R128's K-weighting is not defined and nothing is measured: the files then
    /// carry no gain placeholders either (they kept "+0.000 dB" and a peak of 0, as if measured).
    @Test func underTheLowestRateTheMeterTakesNoTagsAreReserved() throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 3_000)
        let rig = try ALSATestRig(input: TestSignal(format: format, frames: 3 * 3_000).alsaBytes)
        let result = try runHark(["record", "-D", "filecap", "-r", "3000", "-d", "2", "-o", rig.path("low.flac"), "-o", rig.path("low.opus")],
                                 rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(!result.standardError.contains("LUFS"), "\(result.standardError)")
        #expect(try !FLACTools.tags(rig.path("low.flac")).contains { $0.hasPrefix("REPLAYGAIN") })
        #expect(try !OpusTools.tags(rig.path("low.opus")).comments.contains { $0.hasPrefix("R128") })
    }

    /// `--no-auto-tags` leaves out when and on what a recording was made, not its loudness: FLAC
    /// keeps its gain tags, and WAV its `bext` chunk, with the loudness and no date or time.
    @Test func withoutTheRecordingDetailsTheLoudnessStays() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 6 * 48_000).alsaBytes)
        let result = try runHark(["record", "-D", "filecap", "-d", "5", "--no-auto-tags",
                                  "-o", rig.path("n.flac"), "-o", rig.path("n.wav")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let tags = try FLACTools.tags(rig.path("n.flac"))
        #expect(tags.contains { $0.hasPrefix("REPLAYGAIN_TRACK_GAIN=") }, "\(tags)")
        #expect(!tags.contains { $0.hasPrefix("DATE=") || $0.hasPrefix("HARK_") }, "\(tags)")
        let wav = try Data(contentsOf: URL(fileURLWithPath: rig.path("n.wav")))
        let bext = try #require(wav.range(of: Data("bext".utf8))).upperBound + 4
        #expect(wav[bext + 346] == 2)
        let loudness = Int(Int16(bitPattern: UInt16(wav[bext + 412]) | UInt16(wav[bext + 413]) << 8))
        #expect(loudness != 0x7FFF && loudness < 0, "measured, in hundredths of a LUFS: \(loudness)")
        #expect(wav[bext..<(bext + 256)].allSatisfy { $0 == 0 }, "no description")
        #expect(wav[(bext + 320)..<(bext + 346)].allSatisfy { $0 == 0 }, "no date, time or time reference")
    }

    /// Float input far past full scale: two samples of 2·10^38 made the meter's figures NaN and
    /// stopped hark (SIGILL) when they were written into the WAV's header, and a FLAC (which
    /// stores floats clipped to 24 bits) was given the gain of audio it does not hold (a glitch of
    /// 10^6 gave it −98 dB). Each file's figures are now those of what it holds.
    @Test func floatsFarPastFullScaleAreMeasuredAsEachFileHoldsThem() throws {
        var samples = (0..<(6 * 48_000)).flatMap { frame -> [Float] in
            let sine = Float(0.3 * sin(2 * Double.pi * 440 * Double(frame) / 48_000))
            return [sine, sine]
        }
        samples[2 * 5_000] = 2e38
        samples[2 * 5_001] = 2e38
        samples[2 * 100_000] = 1e6
        samples[2 * 150_000 + 1] = .infinity
        samples[2 * 160_000] = .nan
        let rig = try ALSATestRig(input: samples.withUnsafeBytes { Data($0) })
        let result = try runHark(["record", "-D", "filecap", "-f", "FLOAT_LE", "-d", "5",
                                  "-o", rig.path("f.flac"), "-o", rig.path("f.wav"), "-o", rig.path("f.opus")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.errorLines.filter { $0.contains("LUFS") }.count == 1, "\(result.standardError)")
        let wav = try Data(contentsOf: URL(fileURLWithPath: rig.path("f.wav")))
        let bext = try #require(wav.range(of: Data("bext".utf8))).upperBound + 4
        let wavLoudness = Int16(bitPattern: UInt16(wav[bext + 412]) | UInt16(wav[bext + 413]) << 8)
        #expect(wavLoudness != 0x7FFF && wavLoudness > 0, "the WAV holds the huge samples, and is measured so: \(wavLoudness)")

        let gainText = try #require(try FLACTools.tags(rig.path("f.flac")).first { $0.hasPrefix("REPLAYGAIN_TRACK_GAIN=") })
        let gain = try #require(Double(gainText.dropFirst("REPLAYGAIN_TRACK_GAIN=".count).dropLast(3)))
        let opusGain = try #require(try OpusTools.tags(rig.path("f.opus")).comments.first { $0.hasPrefix("R128_TRACK_GAIN=") }
            .flatMap { Int($0.dropFirst("R128_TRACK_GAIN=".count)) })
        #expect(abs(Double(opusGain) / 256 - (gain - 5)) < 0.01, "Opus clips as FLAC does: the same loudness")
        guard let reference = try Self.ffmpegLoudness(["-i", rig.path("f.flac")]) else { return }
        #expect(abs(-18 - gain - reference.integrated) <= 0.15, "FLAC's gain \(gain) dB against ffmpeg's \(reference.integrated) LUFS")
    }
}
