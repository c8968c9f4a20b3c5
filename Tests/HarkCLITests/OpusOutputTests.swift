import AudioFormat
import Foundation
import Testing

/// Ogg Opus output, recorded by the built `hark` from known PCM through real ALSA and checked with
/// opus-tools: clean stream, exact length, faithful audio, EOS after a stop.
@Suite struct OpusOutputTests {
    static func format(channels: Int = 2, rate: Int = 48_000, _ sampleFormat: SampleFormat = .s16LE) -> PCMFormat {
        PCMFormat(sampleFormat: sampleFormat, channels: channels, sampleRate: rate)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let channels: Int
        let bitrate: Int
        let sampleFormat: SampleFormat
        var testDescription: String { "\(channels) ch \(sampleFormat.alsaName) at \(bitrate) kb/s" }
    }

    @Test(arguments: [Case(channels: 2, bitrate: 128, sampleFormat: .s16LE), Case(channels: 1, bitrate: 64, sampleFormat: .s16LE),
                      Case(channels: 2, bitrate: 64, sampleFormat: .s24LE)])
    func tenSecondsAreCleanExactAndFaithful(_ testCase: Case) throws {
        let format = Self.format(channels: testCase.channels, testCase.sampleFormat)
        let signal = TestSignal(format: format, frames: 480_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("take.opus")
        let result = try runHark(["record", "-D", "filecap", "-c", "\(testCase.channels)", "-f", testCase.sampleFormat.alsaName,
                                  "-d", "10", "--bitrate", "\(testCase.bitrate)", "-o", output], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let info = try OpusTools.info(output)
        #expect(info.isClean, "\(info.text)")
        #expect(info.text.contains("Channels: \(testCase.channels)"))
        let decoded = try OpusTools.decode(output)
        #expect(decoded.channels == testCase.channels)
        #expect(decoded.samples.count / testCase.channels == 480_000, "exactly the captured length")
        let shift = Double(1 << (format.sampleFormat.encodedBitsPerSample - 16))
        for index in 0..<testCase.channels {
            let reference = channel(index, of: signal.samples, channels: testCase.channels).map { $0 / shift }
            let (snr, lag) = alignedSNR(reference: reference, decoded: channel(index, of: decoded.samples, channels: testCase.channels))
            #expect(snr >= 15, "channel \(index): SNR \(snr) dB at lag \(lag)")
            #expect(lag == 0, "opusdec applies the pre-skip, so the output is aligned")
        }
    }

    @Test func a44100HzCaptureIsResampledAndKeepsItsDuration() throws {
        let format = Self.format(rate: 44_100)
        let rig = try ALSATestRig(input: TestSignal(format: format, frames: 441_000).alsaBytes)
        let output = rig.path("cd-rate.opus")
        let result = try runHark(["record", "-D", "filecap", "-r", "44100", "-d", "10", "-o", output], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let info = try OpusTools.info(output)
        #expect(info.isClean && info.text.contains("Original sample rate: 44100 Hz"), "\(info.text)")
        let frames = try OpusTools.decode(output).samples.count / 2
        #expect(abs(frames - 480_000) <= 960, "\(frames) frames at 48 kHz: within one 20 ms frame of 10 s")
    }

    @Test func sigintMidRecordingEndsWithAnEOSPageAndTheCapturedLength() throws {
        let format = Self.format()
        let rig = try ALSATestRig(input: TestSignal(format: format, frames: 12 * 48_000).alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("interrupted.opus")
        let recording = try startHark(["record", "-D", "pacedcap", "-o", output], rig: rig)
        try OutputGrowth.waitForOpusAudio(output, seconds: 1)
        recording.send(SIGINT)
        let result = recording.wait(timeout: 10)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try OpusTools.info(output).isClean)
        let pages = OggPage.pages(of: try Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(pages.last?.isEndOfStream == true)
        #expect(pages.dropLast().allSatisfy { !$0.isEndOfStream })
        let decodedFrames = try OpusTools.decode(output).samples.count / 2
        #expect(decodedFrames > 0)
        #expect(result.standardError.contains(" \(decodedFrames) frames,"), "summary vs decoded \(decodedFrames): \(result.standardError)")
    }

    @Test func streamingToStdoutFeedsOpusdec() throws {
        let format = Self.format()
        let rig = try ALSATestRig(input: TestSignal(format: format, frames: 3 * 48_000).alsaBytes)
        let wav = rig.path("piped.wav")
        let stream = rig.path("piped.opus")
        // bash, for pipefail and PIPESTATUS: every stage's exit status, hark's first, so a hark that
        // fails after writing a decodable start cannot pass.
        let pipeline = "set -o pipefail; "
            + harkCommand(["record", "-D", "filecap", "-d", "3", "--format", "opus", "-o", "-"])
            + " | tee " + shellQuoted(stream) + " | opusdec --quiet --force-wav - " + shellQuoted(wav)
            + "; statuses=\"${PIPESTATUS[*]}\"; echo \"$statuses\"; [ \"$statuses\" = \"0 0 0\" ]"
        let result = try runTool("bash", ["-c", pipeline], environment: rig.environment)
        let statuses = String(decoding: result.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(result.status == 0 && statuses == "0 0 0", "hark, tee, opusdec exited \(statuses): \(result.standardError)")
        let info = try OpusTools.info(stream)
        #expect(info.isClean, "\(info.text)")
        #expect(OggPage.pages(of: try Data(contentsOf: URL(fileURLWithPath: stream))).last?.isEndOfStream == true)
        let decoded = try WAVFile.read16Bit(Data(contentsOf: URL(fileURLWithPath: wav)))
        #expect(decoded.samples.count / 2 == 144_000)
    }

    @Test func tagsAndTheEncoderAreInOpusTagsAndVorbisComments() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format(), frames: 48_000).alsaBytes)
        for name in ["tagged.opus", "tagged.flac"] {
            let result = try runHark(["record", "-D", "filecap", "-d", "1", "--tag", "TITLE=Standup notes",
                                      "--tag", "artist=Ada", "-o", rig.path(name)], rig: rig)
            #expect(result.status == 0, "\(result.standardError)")
        }
        let opusTags = try OpusTools.info(rig.path("tagged.opus")).text
        #expect(opusTags.contains("ENCODER=hark 0.1.0 (libopus ") && opusTags.contains("TITLE=Standup notes")
                && opusTags.contains("ARTIST=Ada"), "\(opusTags)")
        let flacTags = try FLACTools.metaflac(["--export-tags-to=-", rig.path("tagged.flac")])
        #expect(flacTags.contains("ENCODER=hark 0.1.0 (libFLAC 1.") && flacTags.contains("TITLE=Standup notes")
                && flacTags.contains("ARTIST=Ada"), "\(flacTags)")
    }

    static let invalid: [UsageErrorTests.Case] = [
        .init(arguments: ["--bitrate", "3"], exitCode: 64, mentions: "bitrate 3.0 kb/s is outside 6–512"),
        .init(arguments: ["--bitrate", "fast"], exitCode: 64, mentions: "'fast' is invalid for '--bitrate <kbps>'"),
        .init(arguments: ["--complexity", "11"], exitCode: 64, mentions: "complexity 11 is outside 0–10"),
        .init(arguments: ["--frame-size", "7"], exitCode: 64, mentions: "frame size 7.0 ms"),
        .init(arguments: ["--application", "music"], exitCode: 64, mentions: "'music' is invalid for '--application <type>'"),
        .init(arguments: ["--max-delay", "2000"], exitCode: 64, mentions: "max delay 2000 ms is outside 0–1000"),
        .init(arguments: ["--vbr", "--hard-cbr"], exitCode: 64, mentions: "--vbr"),
        .init(arguments: ["--compression-level", "3"], exitCode: 64, mentions: "--compression-level applies to FLAC output"),
        .init(arguments: ["-c", "6"], exitCode: 64, mentions: "name them with --channel-map"),
        .init(arguments: ["--tag", "NOEQUALS"], exitCode: 64, mentions: "tag 'NOEQUALS' is not KEY=VALUE"),
    ]

    @Test(arguments: invalid)
    func invalidOpusOptionsAreOneLineAndExit64(_ testCase: UsageErrorTests.Case) throws {
        let rig = try ALSATestRig(input: Data())
        let result = try runHark(["record", "-D", "filecap", "-o", rig.path("x.opus")] + testCase.arguments, rig: rig)
        #expect(result.status == testCase.exitCode, "\(result.standardError)")
        #expect(result.errorLines.count == 1, "\(result.standardError)")
        #expect(result.standardError.contains(testCase.mentions), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: rig.path("x.opus")))
    }

    @Test func opusOptionsWithFLACOutputAreRefused() throws {
        let rig = try ALSATestRig(input: Data())
        let result = try runHark(["record", "-D", "filecap", "--bitrate", "96", "-o", rig.path("x.flac")], rig: rig)
        #expect(result.status == 64 && result.standardError.contains("--bitrate applies to Opus output; this recording is FLAC"))
    }
}
