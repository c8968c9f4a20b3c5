import AudioFormat
import Foundation
import SignalGenerator
import Testing

/// `-o` given more than once: one capture, one consent and one access-log entry feed every
/// output, each with its own codec and limits, each checked by an independent decoder; and each
/// output is independent: a reader that goes away, a full disk, a size limit or a stalled reader
/// ends or costs only its own output.
@Suite struct MultipleOutputsTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    /// The raw bytes of `signal`'s first `frames` frames, as `--format raw` writes them.
    static func rawBytes(_ signal: TestSignal, frames: Int) -> Data {
        signal.alsaBytes.prefix(frames * signal.format.bytesPerFrame)
    }

    /// Each output's summary line: "  PATH (codec): N frames, B bytes, D frames dropped[; …]".
    static func outputLine(_ standardError: String, _ path: String) -> String? {
        standardError.split(separator: "\n").map(String.init).first { $0.hasPrefix("hark:   \(path) (") }
    }

    static func number(before word: String, in line: String) -> Int? {
        guard let range = line.range(of: #"[0-9]+ "# + word, options: .regularExpression) else { return nil }
        return Int(line[range].split(separator: " ")[0])
    }

    @Test func everyOutputOfOneCaptureDecodesToTheInputWithOneConsentAndOneLogEntry() throws {
        let signal = TestSignal(format: Self.format, frames: 3 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let flac = rig.path("archive.flac"), opus = rig.path("live.opus"), wav = rig.path("copy.wav")
        let result = try runHarkIntoPipe(["record", "-D", "filecap", "-d", "2", "--title", "Standup",
                                          "-o", flac, "--compression-level", "8",
                                          "-o", "-", "--format", "raw",
                                          "-o", opus, "--bitrate", "64",
                                          "-o", wav], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("recorded 2.000 s to 4 outputs"), "\(result.standardError)")
        // FLAC and WAV bit-exact, stdout the raw samples themselves.
        try expectSameElements(FLACTools.decode(flac, bitsPerSample: 16)[...], signal.prefix(frames: 96_000))
        expectSameElements(result.standardOutput, Self.rawBytes(signal, frames: 96_000))
        let soxWAV = try WAVAndRawOutputTests.soxSamples(wav, scratch: wav)
        expectSameElements(soxWAV, Self.rawBytes(signal, frames: 96_000))
        // Opus: 2 s decoded by opusdec (a lossy codec: its length, not its samples), at 64 kb/s.
        let decoded = try OpusTools.decode(opus)
        #expect(decoded.channels == 2 && decoded.samples.count == 2 * 96_000)
        let info = try OpusTools.info(opus)
        #expect(info.isClean, "\(info.text)")
        // Each codec's own options reached it, and the tags every output that carries them.
        #expect(try FLACTools.tags(flac).contains("TITLE=Standup"))
        #expect(try OpusTools.tags(opus).comments.contains("TITLE=Standup"))
        // One recording in the access log, naming every output and codec.
        // (Lines with an "event" are a recording's start, not an entry.)
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8).split(separator: "\n").filter { !$0.contains("\"event\"") }
        #expect(log.count == 1, "\(log)")
        #expect(log.first?.contains("flac, raw, opus, wav") == true && log.first?.contains(", stdout, ") == true, "\(log)")
        // The Opus output's own option reached it: its size is a recording's to it alone with
        // --bitrate 64, well under one's at the default 96 kb/s. (Not the samples: libopus's
        // analysis looks ahead into what libopusenc has buffered, so how the audio arrives in
        // chunks changes the encoding slightly, even between two recordings to one output.)
        func size(_ path: String) throws -> Int { try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) }
        let alone = rig.path("alone.opus"), louder = rig.path("default.opus")
        #expect(try runHark(["record", "-D", "filecap", "-d", "2", "-o", alone, "--bitrate", "64"], rig: rig).status == 0)
        #expect(try runHark(["record", "-D", "filecap", "-d", "2", "-o", louder], rig: rig).status == 0)
        let sizes = (multiple: try size(opus), alone: try size(alone), louder: try size(louder))
        #expect(abs(Double(sizes.multiple) / Double(sizes.alone) - 1) < 0.05 && Double(sizes.louder) > 1.2 * Double(sizes.alone), "\(sizes)")
    }

    @Test func aReaderThatGoesAwayEndsOnlyItsOutput() throws {
        let signal = TestSignal(format: Self.format, frames: 4 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let flac = rig.path("archive.flac")
        let result = try runTool("bash", ["-c", "set -o pipefail; " + harkCommand(["record", "-D", "filecap", "-d", "3",
                                                                                   "-o", flac, "-o", "-", "--format", "raw"])
                                          + " | head -c 1000 > /dev/null"], environment: rig.environment)
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.errorLines.last == "hark: output stdout failed: cannot write the output: the reader closed the pipe; "
                + "it was finalized and the other outputs went on", "\(result.standardError)")
        // The archive went on to the end of -d, finished and bit-exact.
        #expect(try expectFinishedPrefix(flac, of: signal) == 144_000)
        let line = try #require(Self.outputLine(result.standardError, "stdout"), "\(result.standardError)")
        #expect(line.contains("; failed: cannot write the output: the reader closed the pipe"), "\(line)")
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root (CI runs as root)"))
    func aFullDiskEndsOnlyTheOutputOnItWithAValidFile() throws {
        let signal = TestSignal(format: Self.format, frames: 10 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let flac = rig.path("archive.flac"), copy = rig.path("copied.wav")
        try rig.withSmallDisk(size: "1m") { mountPoint in
            // 10 s of WAV is 1.9 MB: twice the disk.
            let wav = mountPoint + "/full.wav"
            let result = try runHark(["record", "-D", "filecap", "-d", "10", "-o", wav, "-o", flac], rig: rig)
            #expect(result.status == 74, "\(result.standardError)")
            #expect(result.errorLines.last?.hasPrefix("hark: output \(wav) failed: cannot write the output: the disk is full") == true,
                    "\(result.standardError)")
            #expect(Self.outputLine(result.standardError, wav)?.contains("; failed: cannot write the output: the disk is full") == true,
                    "\(result.standardError)")
            // Its line counts the bytes the finished file holds, header and all.
            let size = try FileManager.default.attributesOfItem(atPath: wav)[.size] as? Int
            #expect(Self.outputLine(result.standardError, wav).flatMap { Self.number(before: "bytes", in: $0) } == size, "\(result.standardError)")
            try FileManager.default.copyItem(atPath: wav, toPath: copy)
        }
        // The full disk's WAV is finished: its header's sizes say what it holds, whole frames of
        // the input's start.
        let info = try WAVAndRawOutputTests.soxInfo(copy)
        let frames = try #require(info["Duration"]?.firstMatch(of: /= ([0-9]+) samples/).flatMap { Int($0.1) }, "\(info)")
        #expect(frames > 100_000 && frames < 480_000, "\(info)")
        try expectSameElements(WAVAndRawOutputTests.soxSamples(copy, scratch: copy), Self.rawBytes(signal, frames: frames))
        // The other disk's FLAC holds all 10 s.
        #expect(try expectFinishedPrefix(flac, of: signal) == 480_000)
    }

    /// An output whose header cannot be written ends alone, as it would a moment later: the
    /// others record, and nothing of it is left. Here it is the first one given, so the summary's
    /// loudness (the first output's) must come from the one that records.
    @Test func aReaderGoneBeforeTheHeaderEndsOnlyItsOutput() throws {
        let signal = TestSignal(format: Self.format, frames: 4 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let flac = rig.path("archive.flac")
        let hark = harkCommand(["record", "-D", "filecap", "-d", "3", "-o", "-", "-o", flac])
        let result = try runTool("bash", ["-c", readerGoneBeforeTheStart(hark)], environment: rig.environment)
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.errorLines.last == "hark: output stdout failed at the start: cannot write the output: the reader closed the pipe; "
                + "the other outputs went on", "\(result.standardError)")
        #expect(Self.outputLine(result.standardError, "stdout") == "hark:   stdout (flac): 0 frames, 0 bytes, 0 frames dropped; "
                + "failed at the start: cannot write the output: the reader closed the pipe", "\(result.standardError)")
        let first = try #require(result.errorLines.first { $0.hasPrefix("hark: recorded") }, "\(result.standardError)")
        #expect(first.hasPrefix("hark: recorded 3.000 s to 2 outputs") && first.contains(" LUFS"), "\(first)")
        #expect(try expectFinishedPrefix(flac, of: signal) == 144_000)
        // The access log names what was recorded: the archive alone.
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8).split(separator: "\n").filter { !$0.contains("\"event\"") }
        #expect(log.count == 1 && log[0].contains("\"output\":\"\(flac)\""), "\(log)")
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root (CI runs as root)"))
    func aDiskFullBeforeTheHeaderEndsOnlyTheOutputOnItAndLeavesNoFile() throws {
        let signal = TestSignal(format: Self.format, frames: 4 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let flac = rig.path("archive.flac")
        try rig.withSmallDisk(size: "1m") { mountPoint in
            try fillDisk(mountPoint)
            let wav = mountPoint + "/full.wav"
            let result = try runHark(["record", "-D", "filecap", "-d", "3", "-o", flac, "-o", wav], rig: rig)
            #expect(result.status == 74, "\(result.standardError)")
            #expect(result.errorLines.last == "hark: output \(wav) failed at the start: cannot write the output: the disk is full; "
                    + "the other outputs went on", "\(result.standardError)")
            // Neither the file nor its temporary name: only what filled the disk.
            #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint) == ["filler"])
        }
        #expect(try expectFinishedPrefix(flac, of: signal) == 144_000)
    }

    @Test func eachOutputHasItsOwnSizeLimitAndSplitting() throws {
        let signal = TestSignal(format: Self.format, frames: 4 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let small = rig.path("small.flac"), part = rig.path("part.wav"), whole = rig.path("whole.raw")
        let result = try runHark(["record", "-D", "filecap", "-d", "3",
                                  "-o", small, "--max-size", "100k",
                                  "-o", part, "--max-file-time", "1",
                                  "-o", whole], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        // The small FLAC stopped under its limit, finished; the others went on.
        let size = try #require(try FileManager.default.attributesOfItem(atPath: small)[.size] as? Int)
        #expect(size <= 100 * 1024, "\(size) bytes")
        let smallFrames = try expectFinishedPrefix(small, of: signal)
        #expect(smallFrames < 144_000)
        #expect(Self.outputLine(result.standardError, small)?.hasSuffix("; size limit reached") == true, "\(result.standardError)")
        // The WAV in three one-second parts, which played back to back are the recording.
        var parts = Data()
        for name in ["part.wav", "part-2.wav", "part-3.wav"] {
            parts += try WAVAndRawOutputTests.soxSamples(rig.path(name), scratch: rig.path(name))
        }
        expectSameElements(parts, Self.rawBytes(signal, frames: 144_000))
        try expectSameElements(Data(contentsOf: URL(fileURLWithPath: whole)), Self.rawBytes(signal, frames: 144_000))
    }

    /// The promise of a ring per output: a reader that stops reading (its pipe full, hark's writes
    /// to it blocked) fills only its own ring; its output drops frames, counted, while the FLAC
    /// file, fed from the same capture at real-time pace, keeps every frame. The reader takes
    /// nothing for 8 s, which the stdout output's 2.73 s ring and the pipe's 64 KiB cannot cover.
    @Test func aStalledReaderCostsTheFileNothing() throws {
        let signal = TestSignal(format: Self.format, frames: 8 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let flac = rig.path("archive.flac")
        let result = try runTool("bash", ["-c", harkCommand(["record", "-D", "pacedcap", "-d", "5",
                                                             "-o", flac, "-o", "-", "--format", "raw"])
                                          + " | { sleep 8; cat > /dev/null; }"],
                                 environment: rig.environment, timeout: TestLoad.seconds(60))
        #expect(result.status == 0, "\(result.standardError)")
        let stdoutLine = try #require(Self.outputLine(result.standardError, "stdout"), "\(result.standardError)")
        let dropped = try #require(Self.number(before: "frames? dropped", in: stdoutLine), "\(stdoutLine)")
        #expect(dropped > 0, "the stalled output dropped frames: \(stdoutLine)")
        let flacLine = try #require(Self.outputLine(result.standardError, flac), "\(result.standardError)")
        #expect(flacLine.contains(": 240000 frames,") && flacLine.hasSuffix(", 0 frames dropped"), "\(flacLine)")
        #expect(try expectFinishedPrefix(flac, of: signal) == 240_000)
    }

    /// With `--pad-overruns`, what the stalled reader's full ring dropped is silence in its place:
    /// the stream it reads at last is exactly `-d` long, every frame of it is the input's frame
    /// at that moment or silence, and the silence is what the summary counts as dropped. Once the
    /// pipe is full, the reader stops for 5 s of the 8 s recording, past the ring (2.7 s).
    @Test func aStalledReaderGetsSilenceForWhatItsRingDropped() throws {
        let signal = TestSignal(format: Self.format, frames: 10 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let flac = rig.path("archive.flac"), stream = rig.path("stream.raw")
        let result = try runTool("bash", ["-c", harkCommand(["record", "-D", "pacedcap", "-d", "8", "--pad-overruns",
                                                             "-o", flac, "-o", "-", "--format", "raw"])
                                          + " | " + stallingReader(stallSeconds: 5, into: stream)],
                                 environment: rig.environment, timeout: TestLoad.seconds(60))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("the pipe filled up"), "the stall came while hark was writing: \(result.standardError)")
        let stdoutLine = try #require(Self.outputLine(result.standardError, "stdout"), "\(result.standardError)")
        #expect(stdoutLine.contains(": 384000 frames,") && stdoutLine.hasSuffix(" dropped (padded with silence)"), "\(stdoutLine)")
        let dropped = try #require(Self.number(before: "frames? dropped", in: stdoutLine), "\(stdoutLine)")
        #expect(dropped > 0, "the stalled output dropped frames: \(stdoutLine)")
        let flacLine = try #require(Self.outputLine(result.standardError, flac), "\(result.standardError)")
        #expect(flacLine.contains(": 384000 frames,") && flacLine.hasSuffix(", 0 frames dropped"), "\(flacLine)")
        #expect(try expectFinishedPrefix(flac, of: signal) == 384_000)

        let written = try Data(contentsOf: URL(fileURLWithPath: stream))
        #expect(written.count == 384_000 * 4, "\(written.count) bytes")
        expectInputOrSilence(decodeRawSamples(written, bitsPerSample: 16), of: signal, dropped: dropped)
    }

    /// SIGUSR1 splits every output at the same moment of the recording, also one whose ring
    /// dropped frames with no silence in their place (its encoder held back 4 s, as a stalled
    /// disk holds it, with a ring of one second): its count of frames is behind the capture's
    /// by those, and split at the capture's count its new file began that much later in the
    /// audio than the other output's.
    ///
    /// What is asserted holds whatever the schedule: the held-back output's first file ends at or
    /// before the moment the other output's second file begins, its second file begins at or after
    /// it, and what it lacks between the two it counted as dropped. Its encoder, slow under a
    /// sanitizer on a loaded machine, may still be a second behind at the split (its ring full),
    /// so periods right after the split can be dropped too: b-2.flac then begins later than
    /// a-2.flac by those, which the first version of this test took for a split in the wrong place.
    /// Split at the capture's count, the first file runs on past the moment by all it dropped
    /// before (more than half a second here).
    @Test func aSplitStartsEveryOutputsFileAtTheSameMomentAfterOneDroppedFrames() throws {
        let signal = TestSignal(format: Self.format, frames: 12 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        rig.extraEnvironment["HARK_DEBUG_ENCODER_START_DELAY_MS"] = "0,4000"
        let a = rig.path("a.flac"), b = rig.path("b.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "10", "--ring-seconds", "1", "--no-loudness",
                                       "-o", a, "-o", b], rig: rig)
        try OutputGrowth.waitForFLACAudio(b, seconds: 0.5)
        recording.send(SIGUSR1)
        let result = recording.wait(timeout: TestLoad.seconds(60))
        #expect(result.status == 0, "\(result.standardError)")
        let bLine = try #require(Self.outputLine(result.standardError, "\(b), \(rig.path("b-2.flac"))"), "\(result.standardError)")
        let dropped = try #require(Self.number(before: "frames? dropped", in: bLine), "\(bLine)")
        try #require(dropped > 24_000, "the held-back output dropped frames: \(bLine)")
        let aFirst = try FLACTools.decode(a, bitsPerSample: 16), aSecond = try FLACTools.decode(rig.path("a-2.flac"), bitsPerSample: 16)
        let bFirst = try FLACTools.decode(b, bitsPerSample: 16), bSecond = try FLACTools.decode(rig.path("b-2.flac"), bitsPerSample: 16)
        let run = Self.matchedRun
        try #require([aFirst, aSecond, bFirst, bSecond].allSatisfy { $0.count >= 2 * run }, "each file holds audio")
        // The moment of the split: where a-2.flac begins in the input (a dropped nothing, so right
        // after a.flac's frames).
        let split = try #require(Self.inputFrame(of: aSecond, at: 0, in: signal), "a-2.flac begins with the input's audio")
        #expect(split == aFirst.count / 2, "a.flac and a-2.flac hold the input without a gap")
        let bFirstEnd = try #require(Self.inputFrame(of: bFirst, at: bFirst.count / 2 - run, in: signal), "b.flac ends with the input's audio") + run
        let bSecondStart = try #require(Self.inputFrame(of: bSecond, at: 0, in: signal), "b-2.flac begins with the input's audio")
        print("MultipleOutputsTests: split at input frame \(split); b.flac ends at \(bFirstEnd), b-2.flac begins at \(bSecondStart); b dropped \(dropped)")
        #expect(bFirstEnd <= split, "b.flac runs on \(bFirstEnd - split) frames past the split")
        #expect(bSecondStart >= split, "b-2.flac begins \(split - bSecondStart) frames before the split")
        #expect(bSecondStart - bFirstEnd <= dropped, "b lacks \(bSecondStart - bFirstEnd) frames at the split, more than the \(dropped) it dropped")
    }

    /// Frames compared at once to place a file's audio in the input: one stereo 16-bit frame of
    /// the test signal (noise in it) can repeat in 12 s; 32 in a row do not.
    static let matchedRun = 32

    /// The input frame where `matchedRun` frames of `decoded` from `frame` are found, or nil.
    static func inputFrame(of decoded: [Int32], at frame: Int, in signal: TestSignal) -> Int? {
        let channels = signal.format.channels
        let wanted = decoded[(frame * channels)..<((frame + matchedRun) * channels)]
        return (0...(signal.frames - matchedRun)).first { start in
            signal.samples[start * channels] == wanted.first! && signal.samples[(start * channels)..<((start + matchedRun) * channels)].elementsEqual(wanted)
        }
    }

    @Test func usageErrorsNameTheOutput() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 4800).alsaBytes)
        let cases: [([String], String)] = [
            (["-o", "a.flac", "-o", "b.flac", "--bitrate", "64"], "hark: --bitrate applies to Opus output; 'b.flac' is FLAC"),
            (["-o", "a.flac", "-o", "a.flac"], "hark: -o 'a.flac' is given twice; give each output its own file"),
            (["-o", "a.flac", "-o", "./a.flac"], "hark: -o './a.flac' is the same file as -o 'a.flac'; give each output its own file"),
            (["-o", "a.raw", "-o", "b.raw", "--title", "x"], "hark: --title: raw output is the samples alone and has no tags"),
            (["-o", "a.flac", "-o", "b.opus", "--complexity", "11"], "hark: output 2: complexity 11 is outside 0–10"),
            (["-o", "a.flac", "-o", "b.xyz"], "hark: cannot tell the codec from 'b.xyz'"),
        ]
        for (arguments, expected) in cases {
            let result = try runHark(["record", "-D", "filecap", "-d", "0.1"] + arguments.map { $0.contains(".") ? rig.path($0) : $0 },
                                     rig: rig)
            #expect(result.status == 64, "\(arguments): \(result.standardError)")
            let message = result.standardError.replacingOccurrences(of: rig.directory.path + "/", with: "")
            #expect(message.hasPrefix(expected), "\(arguments): \(message)")
            #expect(!FileManager.default.fileExists(atPath: rig.path("a.flac")), "nothing is created on a usage error")
        }
    }

    /// The first output ends at its --max-size while still quiet; the music comes after. The status
    /// line's levels go on from the next output (before, they froze at the quiet ones), and the
    /// summary's and the access log's loudness are that output's, which recorded it all (before,
    /// the first output's 0.3 s: "loudness unmeasured").
    @Test func anOutputEndingEarlyLeavesTheLevelsAndTheLoudnessToTheOthers() throws {
        // 1.5 s of a 1 kHz tone at -46 dBFS, then 6.5 s of it at -6.0 dBFS (its samples reach
        // exactly half of full scale: 48 samples a cycle), in both channels: long enough for the
        // status line to draw it however late a loaded machine's encoder is.
        var samples: [Int32] = []
        for frame in 0..<(8 * 48_000) {
            let amplitude = frame < 72_000 ? 164.0 : 16_384.0
            let value = Int32((amplitude * sin(2 * Double.pi * 1_000 * Double(frame) / 48_000)).rounded())
            samples += [value, value]
        }
        let rig = try ALSATestRig(input: Data(MusicLikeSignal.alsaBytes(samples, format: .s16LE)))
        try rig.startPulseAudio()
        let wav = rig.path("short.wav"), flac = rig.path("whole.flac")
        let terminal = try TerminalSession(harkCommand(["record", "-D", "pacedcap", "-d", "7", "-o", wav, "--max-size", "64k", "-o", flac]),
                                           rig: rig, columns: 160)
        let result = terminal.finish(timeout: TestLoad.seconds(40))
        #expect(result.status == 0, "\(result.screen)")
        #expect(result.screen.contains("size limit reached"), "\(result.screen)")
        // The loud part's peak and RMS, on the status line.
        #expect(result.screen.contains("-6.0  -9.0"), "\(result.screen)")
        // The summary's loudness is the FLAC's own, as its ReplayGain tag has it (gain to -18 LUFS).
        let summary = try #require(result.screen.range(of: #"-?[0-9]+\.[0-9] LUFS"#, options: .regularExpression).map { result.screen[$0] },
                                   "\(result.screen)")
        let lufs = try #require(Double(summary.split(separator: " ")[0]))
        let gainTag = try #require(try FLACTools.tags(flac).first { $0.hasPrefix("REPLAYGAIN_TRACK_GAIN=") })
        let gain = try #require(Double(gainTag.dropFirst("REPLAYGAIN_TRACK_GAIN=".count).split(separator: " ")[0]))
        #expect(abs(lufs - (-18 - gain)) < 0.06, "summary \(lufs) LUFS, the FLAC's gain \(gain) dB")
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8).split(separator: "\n").filter { !$0.contains("\"event\"") }
        #expect(log.count == 1, "\(log)")
        let logged = try #require(log.first.flatMap { line in line.range(of: #""loudnessLUFS":-?[0-9.]+"#, options: .regularExpression).map { line[$0] } },
                                  "\(log)")
        let loggedLUFS = try #require(Double(logged.split(separator: ":")[1]))
        #expect(abs(loggedLUFS - lufs) < 0.06, "the access log's \(loggedLUFS) LUFS, the summary's \(lufs)")
    }
}
