import AudioFormat
import Foundation
import Testing

/// The device faults the rig cannot produce for real — an ALSA overrun (-EPIPE) and a system
/// suspend (-ESTRPIPE) — injected at the `snd_pcm_readi` seam of a debug build
/// (`HARK_DEBUG_CAPTURE_FAULTS`, see `CaptureFaultInjection`), so the recovery around them runs
/// for real: `snd_pcm_prepare`, `snd_pcm_resume` and `snd_pcm_start` on the rig's ALSA PCM, the
/// overrun counted with the time it cost, and the loss padded with silence when asked.
/// An injected overrun loses audio as a real one does: frames read from the source and thrown away.
@Suite struct InjectedDeviceFaultTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    static let frames = 4 * 48_000

    func record(faults: String, _ extraArguments: [String] = []) throws -> (ToolResult, [Int32], TestSignal) {
        let signal = TestSignal(format: Self.format, frames: Self.frames + 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("faulty.flac")
        var environment = rig.environment
        environment["HARK_DEBUG_CAPTURE_FAULTS"] = faults
        let result = try RunningProcess(harkBinary, ["record", "-D", "filecap", "-d", "4", "-o", output] + extraArguments,
                                        environment: environment, scratch: rig.directory).wait(timeout: 60)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try FLACTools.test(output).status == 0)
        return (result, try FLACTools.decode(output, bitsPerSample: 16), signal)
    }

    @Test func anOverrunIsRecoveredCountedAndReportedInMilliseconds() throws {
        let (result, decoded, signal) = try record(faults: "overrun@96000+12000")
        #expect(result.standardError.contains("192000 frames"), "\(result.standardError)")
        #expect(result.standardError.contains("1 overrun (250 ms lost), 0 frames dropped"), "\(result.standardError)")
        // The input up to the overrun, then the input after what was lost: the recording went on.
        let samples = signal.samples
        let expected = Array(samples[..<(96_000 * 2)]) + Array(samples[(108_000 * 2) ..< (204_000 * 2)])
        expectSameElements(decoded, expected)
    }

    @Test func padOverrunsFillsAnOverrunWithExactlyItsSilence() throws {
        let (result, decoded, signal) = try record(faults: "overrun@96000+12000,overrun@144000+4800", ["--pad-overruns"])
        #expect(result.standardError.contains("2 overruns (350 ms lost, 350 ms padded with silence)"), "\(result.standardError)")
        let samples = signal.samples
        // Faults strike at source frames. The timeline: input 0..<96000; 12000 frames of silence
        // for the input lost (96000..<108000); input 108000..<144000; 4800 of silence for
        // 144000..<148800; input from 148800 to the 4 s end. Every frame sits at its true time.
        let silence = { (frames: Int) in [Int32](repeating: 0, count: frames * 2) }
        let expected = Array(samples[..<(96_000 * 2)]) + silence(12_000)
            + Array(samples[(108_000 * 2) ..< (144_000 * 2)]) + silence(4_800)
            + Array(samples[(148_800 * 2) ..< (Self.frames * 2)])
        #expect(decoded.count == Self.frames * 2, "the timeline is exactly -d long")
        expectSameElements(decoded, expected)
    }

    @Test func aSuspendIsResumedWithoutLosingAFrame() throws {
        let (result, decoded, signal) = try record(faults: "suspend@96000,suspend@150000")
        #expect(result.standardError.contains("0 overruns (0 ms lost), 0 frames dropped"), "\(result.standardError)")
        expectSameElements(decoded, signal.prefix(frames: Self.frames))
    }
}
