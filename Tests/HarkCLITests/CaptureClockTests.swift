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
        let output = rig.path("timed.flac")
        let launched = Date()
        let result = try runHark(["record", "-v", "-D", "pacedcap", "-d", "16", "-o", output], rig: rig)
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
        let ppm = try #require(summary.firstMatch(of: /device clock ([+-]\d+\.\d) ppm against the system's/)?.1, "\(summary)")
        #expect(abs(Double(ppm)!) < 500, "\(summary)")
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8)
        #expect(log.contains("\"firstSample\":\"\(stamp)\""), "\(log)")
        #expect(log.contains("\"clockDriftPPM\":\(Double(ppm)!)") || log.contains("\"clockDriftPPM\":\(Int(Double(ppm)!))"), "\(log)")
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
    }
}
