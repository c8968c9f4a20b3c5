import Foundation
import Loudness
import Testing

@Suite struct LoudnessTagTests {
    func measurement(_ integrated: Double?, truePeak: Double = 0.5, range: Double? = 3) -> LoudnessMeasurement {
        LoudnessMeasurement(integratedLoudness: integrated, loudnessRange: range, truePeak: truePeak,
                            samplePeak: truePeak, seconds: 10)
    }

    @Test func replayGainTrackGainReachesMinus18LUFS() {
        let cases: [(Double?, String)] = [
            (-26.5, "+8.500 dB"), (-5.66, "-12.34 dB"), (-18, "+0.000 dB"), (-18.0004, "+0.000 dB"),
            (-17.9996, "+0.000 dB"), (-9, "-9.000 dB"), (-27.9994, "+9.999 dB"), (-27.9996, "+10.00 dB"),
            (-8.0004, "-10.00 dB"), (-117.99, "+99.99 dB"), (-300, "+99.99 dB"), (90, "-99.99 dB"), (nil, "+0.000 dB"),
        ]
        for (integrated, expected) in cases {
            #expect(measurement(integrated).replayGainTrackGain == expected, "\(String(describing: integrated)) LUFS")
        }
    }

    @Test func replayGainTrackPeakIsTheTruePeakWithSixDecimals() {
        let cases: [(Double, String)] = [
            (0.988553, "0.988553"), (1, "1.000000"), (0, "0.000000"), (1.4142136, "1.414214"),
            (0.0000004, "0.000000"), (9.9999994, "9.999999"), (12, "9.999999"), (.infinity, "9.999999"),
        ]
        for (peak, expected) in cases {
            #expect(measurement(-20, truePeak: peak).replayGainTrackPeak == expected, "\(peak)")
        }
    }

    @Test func r128TrackGainIsQ78ToReachMinus23LUFS() {
        let cases: [(Double?, String)] = [
            (-23, "+00000"), (-24, "+00256"), (-18, "-01280"), (-23.5, "+00128"), (-22.998, "-00001"),
            (-300, "+32767"), (200, "-32768"), (nil, "+00000"),
        ]
        for (integrated, expected) in cases {
            #expect(measurement(integrated).r128TrackGain == expected, "\(String(describing: integrated)) LUFS")
        }
        #expect(measurement(-24).r128TrackGainQ78 == 256)
    }

    /// The recorder overwrites placeholders in file headers in place: no value may change width.
    @Test func tagValuesNeverChangeWidth() {
        #expect(LoudnessMeasurement.replayGainTrackGainPlaceholder.utf8.count == LoudnessMeasurement.replayGainTrackGainWidth)
        #expect(LoudnessMeasurement.replayGainTrackPeakPlaceholder.utf8.count == LoudnessMeasurement.replayGainTrackPeakWidth)
        #expect(LoudnessMeasurement.r128TrackGainPlaceholder.utf8.count == LoudnessMeasurement.r128TrackGainWidth)
        var integrated = -400.0
        var widths = (gain: Set<Int>(), peak: Set<Int>(), r128: Set<Int>())
        while integrated <= 400 {
            let value = measurement(integrated, truePeak: abs(integrated) / 30)
            widths.gain.insert(value.replayGainTrackGain.utf8.count)
            widths.peak.insert(value.replayGainTrackPeak.utf8.count)
            widths.r128.insert(value.r128TrackGain.utf8.count)
            integrated += 0.00137
        }
        for extreme in [Double.greatestFiniteMagnitude, -.greatestFiniteMagnitude, .infinity, -.infinity, .nan, 0, -0.0] {
            let value = measurement(extreme, truePeak: extreme)
            widths.gain.insert(value.replayGainTrackGain.utf8.count)
            widths.peak.insert(value.replayGainTrackPeak.utf8.count)
            widths.r128.insert(value.r128TrackGain.utf8.count)
        }
        #expect(widths.gain == [LoudnessMeasurement.replayGainTrackGainWidth])
        #expect(widths.peak == [LoudnessMeasurement.replayGainTrackPeakWidth])
        #expect(widths.r128 == [LoudnessMeasurement.r128TrackGainWidth])
    }

    @Test func summaryTextIsOneShortPhrase() {
        #expect(measurement(-23.04, truePeak: 0.861, range: 4.21).summaryText
            == "-23.0 LUFS, range 4.2 LU, true peak -1.3 dBTP")
        #expect(measurement(-9.96, truePeak: 1.2, range: nil).summaryText == "-10.0 LUFS, true peak 1.6 dBTP")
        #expect(measurement(-0.04, truePeak: 1, range: 0).summaryText == "0.0 LUFS, range 0.0 LU, true peak 0.0 dBTP")
        #expect(measurement(nil, truePeak: 0).summaryText == "loudness unmeasured (silence or under 0.4 s)")
        #expect(measurement(nil, truePeak: 0.01).summaryText
            == "loudness unmeasured (silence or under 0.4 s), true peak -40.0 dBTP")
    }

    @Test func logFieldsAreRoundedNumbersOrNil() {
        let fields = measurement(-23.04567, truePeak: 0.861, range: 4.2123).logFields
        #expect(fields.map(\.key) == ["loudnessLUFS", "loudnessRangeLU", "truePeakDBTP", "samplePeakDBFS"])
        #expect(fields.map(\.value) == [-23.05, 4.21, -1.3, -1.3])
        #expect(measurement(nil, truePeak: 0).logFields.map(\.value) == [nil, nil, nil, nil])
    }

    /// FFmpeg reads REPLAYGAIN_TRACK_GAIN with `strtol(…, 0)`, so a leading zero means octal
    /// ("+08.50 dB" reads as 0 dB): the forms hark writes have none, and read back exactly.
    @Test(.enabled(if: FFmpegReference.isAvailable, Comment(rawValue: FFmpegReference.skipReason)))
    func ffmpegReadsTheReplayGainValuesBack() throws {
        for (integrated, gain) in [(-26.5, 8.5), (-8.75, -9.25), (-5.66, -12.34), (-17.5, -0.5), (-117.99, 99.99)] {
            let value = measurement(integrated).replayGainTrackGain
            let read = try ffmpegReplayGain(value)
            // ashowinfo prints the value through a float: 99.99 shows as 99.989998.
            #expect(abs((read ?? .infinity) - gain) < 1e-4, "\(value) read as \(read.map { "\($0)" } ?? "nothing")")
        }
        let zeroPadded = try ffmpegReplayGain("+08.50 dB")
        print("LoudnessTests: ffmpeg reads a zero-padded \"+08.50 dB\" as \(zeroPadded.map { "\($0) dB" } ?? "nothing")")
    }

    /// The track gain FFmpeg's `ashowinfo` reports for a one-second FLAC tagged with `gain`.
    func ffmpegReplayGain(_ gain: String) throws -> Double? {
        let executable = try #require(FFmpegReference.executable)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hark-replaygain-\(UUID().uuidString).flac")
        defer { try? FileManager.default.removeItem(at: file) }
        func run(_ arguments: [String]) throws -> String {
            let process = Process()
            process.executableURL = executable
            process.arguments = ["-nostdin", "-hide_banner"] + arguments
            let pipe = Pipe()
            process.standardError = pipe
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw ReferenceError("ffmpeg failed:\n\(output)") }
            return output
        }
        _ = try run(["-loglevel", "error", "-f", "lavfi", "-i", "sine=f=1000:d=1", "-metadata",
                     "REPLAYGAIN_TRACK_GAIN=\(gain)", file.path])
        let output = try run(["-i", file.path, "-af", "ashowinfo", "-f", "null", "-"])
        // "... side data - replaygain: track gain - 8.500000, track peak - ..."
        guard let marker = output.range(of: "track gain - ") else { return nil }
        return Double(output[marker.upperBound...].prefix { $0 != "," })
    }
}
