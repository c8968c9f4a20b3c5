import AudioFormat
import Foundation
import Testing

/// SIGKILL cannot be caught, so nothing can finalize the file: what was written by then must
/// decode, up to at most a second before the kill.
@Suite struct KillTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    @Test(arguments: ["flac", "opus"])
    func aKilledRecordingDecodesUpToASecondBeforeTheKill(_ codec: String) throws {
        let signal = TestSignal(format: Self.format, frames: 12 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        for (run, seconds) in [1.3, 2.1, 2.9].enumerated() {
            let output = rig.path("killed-\(run).\(codec)")
            let recording = try startHark(["record", "-D", "pacedcap", "-o", output], rig: rig)
            // Start the clock when the first audio reaches the file (PulseAudio's start varies).
            // FLAC's header holds STREAMINFO, the tags (DATE, ENCODER, HARK_CAPTURE, about 350 bytes)
            // and the seek table reserved for an hour (360 points of 18 bytes), all written before
            // the first frame.
            let headerBytes = codec == "flac" ? 1_000 + 360 * 18 : 1_000
            var firstAudio: Date?
            for _ in 0..<500 {
                let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
                if size > headerBytes { firstAudio = Date(); break }
                usleep(10_000)
            }
            let started = try #require(firstAudio, "no audio reached \(output)")
            usleep(useconds_t(seconds * 1_000_000))
            recording.send(SIGKILL)
            let elapsed = Date().timeIntervalSince(started)
            _ = recording.wait(timeout: 10)

            let decodedFrames: Int
            if codec == "flac" {
                // The header was never finished (total samples unknown, no MD5): decode what is there.
                let raw = output + ".raw"
                let result = try runTool("flac", ["-d", "-F", "-f", "-s", "--force-raw-format", "--endian=little",
                                                  "--sign=signed", "-o", raw, output])
                #expect(result.status == 0, "\(result.standardError)")
                let decoded = decodeRawSamples(try Data(contentsOf: URL(fileURLWithPath: raw)), bitsPerSample: 16)
                decodedFrames = decoded.count / 2
                #expect(decoded[...] == signal.prefix(frames: decodedFrames), "run \(run): the decoded frames are the input's")
            } else {
                decodedFrames = try OpusTools.decode(output).samples.count / 2
            }
            let decodedSeconds = Double(decodedFrames) / 48_000
            #expect(decodedSeconds >= elapsed - 1.0, "run \(run): \(decodedSeconds) s decoded of \(elapsed) s recorded")
            #expect(decodedSeconds <= elapsed + 0.5, "run \(run): \(decodedSeconds) s decoded of \(elapsed) s recorded")
        }
    }
}
