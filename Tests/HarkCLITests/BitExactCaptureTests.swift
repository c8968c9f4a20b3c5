import AudioFormat
import Foundation
import Testing

/// Known PCM through ALSA's file plugin (real ALSA, unpaced), recorded by the built `hark`,
/// decoded by the reference `flac` decoder: every sample must come back exactly.
@Suite struct BitExactCaptureTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let sampleFormat: SampleFormat
        let channels: Int
        let toStandardOutput: Bool
        var testDescription: String {
            "\(sampleFormat.alsaName) \(channels) ch to \(toStandardOutput ? "stdout" : "a file")"
        }
    }

    static let cases: [Case] = [(SampleFormat.s16LE, 2), (.s24LE, 2), (.s16LE, 1), (.s32LE, 2)]
        .flatMap { format, channels in [false, true].map { Case(sampleFormat: format, channels: channels, toStandardOutput: $0) } }

    @Test(arguments: cases)
    func tenSecondsDecodeBitExact(_ testCase: Case) throws {
        let format = PCMFormat(sampleFormat: testCase.sampleFormat, channels: testCase.channels, sampleRate: 48_000)
        let signal = TestSignal(format: format, frames: 480_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = testCase.toStandardOutput ? "-" : rig.path("take.flac")
        let arguments = ["record", "-D", "filecap", "-f", format.sampleFormat.alsaName,
                         "-c", "\(format.channels)", "-r", "48000", "-d", "10", "-o", output]
        // stdout is a real pipe, as in `hark record -o - | flac -d -c -`.
        let result = testCase.toStandardOutput ? try runHarkIntoPipe(arguments, rig: rig) : try runHark(arguments, rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("480000 frames"), "\(result.standardError)")
        #expect(result.standardError.contains("0 overruns (0 ms lost), 0 frames dropped"))

        let flacPath: String
        if testCase.toStandardOutput {
            #expect(result.standardOutput.prefix(4) == Data("fLaC".utf8), "stdout must carry only the FLAC stream")
            flacPath = rig.path("from-stdout.flac")
            try result.standardOutput.write(to: URL(fileURLWithPath: flacPath))
            // A pipe cannot be rewound: the stream says "total unknown" rather than a wrong count.
            #expect(try FLACTools.totalSamples(flacPath) == 0)
        } else {
            #expect(result.standardOutput.isEmpty, "nothing but audio may go to stdout")
            flacPath = output
            #expect(try FLACTools.totalSamples(flacPath) == 480_000)
            #expect(try FLACTools.md5(flacPath) != String(repeating: "0", count: 32))
        }
        #expect(try FLACTools.test(flacPath).status == 0)
        let decoded = try FLACTools.decode(flacPath, bitsPerSample: format.sampleFormat.encodedBitsPerSample)
        expectSameElements(decoded, signal.samples)
    }

    /// The default level is 5 (the same bytes as `--compression-level 5`), a level changes the
    /// file (0 is larger than 8), `--verify` changes nothing in it, and `--format flac` wins over
    /// an `.opus` name.
    @Test func compressionLevelVerifyAndForcedFormatReachTheFile() throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        let signal = TestSignal(format: format, frames: 3 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        func record(_ name: String, _ extra: [String]) throws -> Data {
            let result = try runHark(["record", "-D", "filecap", "-d", "3", "--no-auto-tags", "-o", rig.path(name)] + extra, rig: rig)
            #expect(result.status == 0, "\(result.standardError)")
            try expectSameElements(FLACTools.decode(rig.path(name), bitsPerSample: 16), signal.samples, "\(name)")
            return try Data(contentsOf: URL(fileURLWithPath: rig.path(name)))
        }
        let standard = try record("default.flac", [])
        try expectSameElements(record("five.flac", ["--compression-level", "5"]), standard)
        try expectSameElements(record("verified.flac", ["--compression-level", "5", "--verify"]), standard)
        let fastest = try record("zero.flac", ["--compression-level", "0"])
        let smallest = try record("eight.flac", ["--compression-level", "8"])
        #expect(fastest.count > smallest.count, "level 0: \(fastest.count) bytes, level 8: \(smallest.count)")
        #expect(fastest != standard && smallest != standard)
        let forced = try record("forced.opus", ["--format", "flac"])
        #expect(forced.prefix(4) == Data("fLaC".utf8))
        expectSameElements(forced, standard)
    }

    @Test func floatInputIsStoredAs24BitFLAC() throws {
        let format = PCMFormat(sampleFormat: .floatLE, channels: 2, sampleRate: 48_000)
        let signal = TestSignal(format: format, frames: 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("float.flac")
        let result = try runHark(["record", "-D", "filecap", "-f", "FLOAT_LE", "-d", "1", "-o", output], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        // The test signal's float values are exact multiples of 2^-23, so the conversion is lossless.
        let decoded = try FLACTools.decode(output, bitsPerSample: 24)
        expectSameElements(decoded, signal.samples)
    }

    @Test func verboseReportsNegotiatedParametersAndScheduling() throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 44_100)
        let rig = try ALSATestRig(input: TestSignal(format: format, frames: 44_100).alsaBytes)
        let result = try runHark(["record", "-v", "-D", "filecap", "-r", "44100", "--period-time", "10000",
                                  "-d", "1", "--compression-level", "8", "--verify", "-o", rig.path("v.flac")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("S16_LE, 2 ch, 44100 Hz, period 441 frames (10.0 ms)"), "\(result.standardError)")
        #expect(result.standardError.contains(/capture thread: (real-time \(SCHED_FIFO, priority \d+\)|normal \(real-time scheduling not permitted\));/),
                "\(result.standardError)")
        #expect(try FLACTools.totalSamples(rig.path("v.flac")) == 44_100)
    }

    /// Without the right to real-time scheduling (CAP_SYS_NICE dropped, RLIMIT_RTPRIO 0) the capture
    /// thread runs normally: `-v` says so, nothing else is printed, and the recording is the same.
    @Test func theCaptureThreadFallsBackQuietlyWithoutRealTimeScheduling() throws {
        guard let setpriv = findOnPath("setpriv"), let prlimit = findOnPath("prlimit") else {
            print("skipped: setpriv or prlimit (util-linux) is not installed")
            return
        }
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        let signal = TestSignal(format: format, frames: 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("normal.flac")
        let result = try RunningProcess(URL(fileURLWithPath: setpriv),
                                        ["--bounding-set=-sys_nice", "--inh-caps=-sys_nice", "--", prlimit, "--rtprio=0",
                                         harkBinary.path, "record", "-v", "-D", "filecap", "-d", "1", "-o", output],
                                        environment: rig.environment, scratch: rig.directory).wait(timeout: 60)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("capture thread: normal (real-time scheduling not permitted);"), "\(result.standardError)")
        #expect(!result.standardError.lowercased().contains("warning"), "\(result.standardError)")
        try expectSameElements(FLACTools.decode(output, bitsPerSample: 16), signal.samples)
    }

    @Test func fractionalDurationStopsAtTheExactFrame() throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        let signal = TestSignal(format: format, frames: 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let result = try runHark(["record", "-D", "filecap", "-d", "0.25", "-o", rig.path("short.flac")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try FLACTools.totalSamples(rig.path("short.flac")) == 12_000)
        let decoded = try FLACTools.decode(rig.path("short.flac"), bitsPerSample: 16)
        expectSameElements(decoded[...], signal.prefix(frames: 12_000))
        // With a unit, as --max-file-time and the sound options take one: 0.0125 min is 0.75 s.
        for (duration, frames, said) in [("250ms", 12_000, "0.250"), ("0.0125m", 36_000, "0.750")] {
            let path = rig.path("unit-\(duration).flac")
            let withUnit = try runHark(["record", "-D", "filecap", "-d", duration, "-o", path], rig: rig)
            #expect(withUnit.status == 0 && withUnit.standardError.contains("for \(said) s"), "\(withUnit.standardError)")
            #expect(try FLACTools.totalSamples(path) == frames, "-d \(duration)")
        }
    }
}
