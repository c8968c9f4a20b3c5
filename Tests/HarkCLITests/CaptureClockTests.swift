import AudioFormat
import Foundation
import Testing

/// The first sample's wall-clock time (to the microsecond, from the device's status timestamps)
/// and the device clock's drift against the system's, in the summary, -v and the access log.
@Suite struct CaptureClockTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    @Test func aPacedRecordingGivesItsFirstSampleTimeAndAClockThatKeepsTime() throws {
        let signal = TestSignal(format: Self.format, frames: 19 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("timed.flac"), opus = rig.path("timed.opus"), wav = rig.path("timed.wav")
        let launched = Date()
        let result = try runHark(["record", "-v", "-D", "pacedcap", "-d", "16", "-o", output, "-o", opus, "-o", wav], rig: rig)
        let ended = Date()
        #expect(result.status == 0, "\(result.standardError)")
        let line = try #require(result.errorLines.first { $0.contains("first sample captured at ") }, "\(result.standardError)")
        let stamp = try #require(line.firstMatch(of: /at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)/)?.1).description
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let first = try #require(formatter.date(from: stamp), "\(stamp)")
        // Captured after hark started, and 16 s of audio before it ended.
        #expect(first >= launched.addingTimeInterval(-0.05) && first <= ended.addingTimeInterval(-15.9), "\(stamp), launched \(launched), ended \(ended)")
        // PulseAudio's null sink keeps the system's time: no crystal, so no drift beyond the
        // timestamps' millisecond-scale jitter over the 5–15 s between the first and the latest bucket.
        let summary = try #require(result.errorLines.first { $0.contains("recorded 16.000 s") }, "\(result.standardError)")
        print("CaptureClockTests: \(line); \(summary)")
        // The files carry them too: FLAC's and Opus's tags, WAV's bext chunk.
        let flacTags = try FLACTools.tags(output)
        #expect(flacTags.contains("HARK_FIRST_SAMPLE_TIME=\(stamp)") && flacTags.contains("HARK_FIRST_SAMPLE=000000000000"), "\(flacTags)")
        let drift = try #require(flacTags.first { $0.hasPrefix("HARK_CLOCK_DRIFT_PPM=") }.map { String($0.dropFirst(21)) })
        let opusInfo = try OpusTools.info(opus)
        #expect(opusInfo.isClean, "\(opusInfo.text)")
        #expect(try OpusTools.tags(opus).comments.contains("HARK_FIRST_SAMPLE_TIME=\(stamp)"))
        #expect(try OpusTools.tags(opus).comments.contains("HARK_CLOCK_DRIFT_PPM=\(drift)"))
        let bext = try Self.broadcastExtension(wav)
        #expect(bext.description == "first sample \(stamp); device clock \(summary.firstMatch(of: /device clock ([+-]\d+\.\d ppm)/)?.1 ?? "?")",
                "\(bext.description)")
        // The whole second from the text too, so a fraction near 1 cannot round into the next.
        let wholeSecond = try #require(ISO8601DateFormatter().date(from: String(stamp.prefix(19)) + "Z"))
        let local = Calendar.current.dateComponents(in: TimeZone.current, from: wholeSecond)
        // The fraction from the text: Foundation's formatter keeps milliseconds only.
        let fraction = Double("0." + stamp.dropFirst(20).prefix(6))!
        let sinceMidnight = Double(local.hour! * 3600 + local.minute! * 60 + local.second!) + fraction
        #expect(abs(Double(bext.timeReference) - sinceMidnight * 48_000) <= 2, "TimeReference \(bext.timeReference) for \(stamp)")
        #expect(try runTool("sox", ["--i", wav]).status == 0)
        let ppm = try #require(summary.firstMatch(of: /device clock ([+-]\d+\.\d) ppm against the system's/)?.1, "\(summary)")
        #expect(abs(Double(ppm)!) < 500, "\(summary)")
        // The same measurement (whole parts per billion): the tag keeps it exactly, the summary
        // rounds it half up to 0.1 ppm, so a half-way value (11.850 → 11.9) differs by exactly
        // 0.05, which the two decimal fractions only approximate in binary.
        #expect(abs(Double(drift)! - Double(ppm)!) <= 0.05 + 1e-9, "the tag's \(drift) and the summary's \(ppm)")
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8)
        #expect(log.contains("\"firstSample\":\"\(stamp)\""), "\(log)")
        #expect(log.contains("\"clockDriftPPM\":\(Double(ppm)!)") || log.contains("\"clockDriftPPM\":\(Int(Double(ppm)!))"), "\(log)")
    }

    /// The `bext` chunk's Description and TimeReference, read from the file's bytes.
    static func broadcastExtension(_ path: String) throws -> (description: String, timeReference: UInt64) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)).prefix(4_096))
        var position = 12
        while position + 8 <= bytes.count {
            let size = Int(bytes[position + 4]) | Int(bytes[position + 5]) << 8 | Int(bytes[position + 6]) << 16 | Int(bytes[position + 7]) << 24
            if bytes[position..<(position + 4)].elementsEqual(Array("bext".utf8)) {
                let body = position + 8
                let description = String(decoding: bytes[body..<(body + 256)].prefix { $0 != 0 }, as: UTF8.self)
                let reference = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[body + 338 + $1]) << (8 * UInt64($1)) }
                return (description, reference)
            }
            position += 8 + size + size % 2
        }
        throw TestRigError("no bext chunk in \(path)")
    }

    @Test func eachFileOfASplitRecordingHasItsOwnFirstSampleTimeAndAKilledOneKeepsThePlaceholderButItsSample() throws {
        let signal = TestSignal(format: Self.format, frames: 30 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let result = try runHark(["record", "-D", "filecap", "-d", "5", "--max-file-time", "2", "-o", rig.path("part.flac")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let times = try ["part.flac", "part-2.flac", "part-3.flac"].map { name in
            let tag = try #require(try FLACTools.tags(rig.path(name)).first { $0.hasPrefix("HARK_FIRST_SAMPLE_TIME=") })
            return try #require(formatter.date(from: String(tag.dropFirst(23))), "\(tag)")
        }
        // 2 s of frames apart, to the microsecond (the formatter keeps milliseconds), each saying
        // which sample of the recording its time is for.
        #expect(abs(times[1].timeIntervalSince(times[0]) - 2) < 0.002 && abs(times[2].timeIntervalSince(times[1]) - 2) < 0.002, "\(times)")
        for (name, sample) in [("part.flac", "000000000000"), ("part-2.flac", "000000096000"), ("part-3.flac", "000000192000")] {
            #expect(try FLACTools.tags(rig.path(name)).contains("HARK_FIRST_SAMPLE=\(sample)"), "\(name)")
        }

        // Killed in its second file: both keep the time's and the drift's placeholders, but each
        // knows which sample it starts at (written as the file starts), so the parts can be placed.
        let killed = rig.path("killed.flac"), killedSecond = rig.path("killed-2.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "20", "--max-file-time", "1", "-o", killed], rig: rig)
        let deadline = Date().addingTimeInterval(30)
        while ((try? Data(contentsOf: URL(fileURLWithPath: killedSecond)).count) ?? 0) < 20_000 && Date() < deadline { usleep(20_000) }
        recording.send(SIGKILL)
        _ = recording.wait(timeout: 10)
        for (path, sample) in [(killed, "000000000000"), (killedSecond, "000000048000")] {
            let tags = try FLACTools.tags(path)
            #expect(tags.contains("HARK_FIRST_SAMPLE_TIME=0000-00-00T00:00:00.000000Z") && tags.contains("HARK_CLOCK_DRIFT_PPM=unmeasured"), "\(tags)")
            #expect(tags.contains("HARK_FIRST_SAMPLE=\(sample)"), "\(path): \(tags)")
        }
    }

    @Test func aShortOrUnpacedRecordingHasAFirstSampleTimeButNoDrift() throws {
        let signal = TestSignal(format: Self.format, frames: 24_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let result = try runHark(["record", "-v", "-D", "filecap", "-d", "0.5", "-o", rig.path("short.flac")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("too short, or no clock, for the drift"), "\(result.standardError)")
        #expect(!result.standardError.contains("device clock"))
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8)
        #expect(log.contains("\"firstSample\":\"") && !log.contains("clockDriftPPM"), "\(log)")
        #expect(try FLACTools.tags(rig.path("short.flac")).contains("HARK_CLOCK_DRIFT_PPM=unmeasured"))
    }
}
