import AudioFormat
import Foundation
import SignalGenerator
import Testing

/// `--start-above`, `--stop-after`, `--split-on-silence` and `--pre-roll` on a deterministic input of
/// bursts (the music-like signal) between near-silences (noise at about −70 dBFS): the right
/// segments, each starting at least the pre-roll before its burst and ending within the silence
/// window after it, bit-exact with the input where they overlap; nothing written when nothing is
/// heard; consent and the access log as for any recording.
@Suite struct SoundActivationTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    static let rate = 48_000
    /// A level block (50 ms): the resolution of every decision.
    static let block = 2_400

    /// Bursts as (start, length) in frames. The last two are 0.3 s apart, less than the 1 s
    /// silence window: one segment with a pause in it.
    static let bursts = [(48_000, 38_400), (163_200, 57_600), (336_000, 28_800), (379_200, 24_000)]
    static let totalFrames = 11 * 48_000

    /// The input: the music-like signal at −6 dB inside the bursts, noise of about −70 dBFS
    /// elsewhere, as interleaved samples. (A `Data` held in a static is reported as a leak by
    /// LeakSanitizer, so the bytes are made for each test: `inputBytes`.)
    static let inputSamples: [Int32] = {
        let music = MusicLikeSignal.samples(frames: totalFrames, channels: 2, sampleRate: rate, bits: 16)
        var random = SplitMix64(seed: 7)
        var samples = [Int32](repeating: 0, count: totalFrames * 2)
        for frame in 0..<totalFrames {
            let inBurst = bursts.contains { frame >= $0.0 && frame < $0.0 + $0.1 }
            for channel in 0..<2 {
                let index = frame * 2 + channel
                samples[index] = inBurst ? music[index] / 2 : Int32(Int(random.next() % 21) - 10)
            }
        }
        return samples
    }()

    /// The bytes ALSA delivers for `inputSamples`.
    static var inputBytes: Data { Data(MusicLikeSignal.alsaBytes(inputSamples, format: .s16LE)) }

    /// The segments the bursts make with a 1 s silence window: the last two bursts are one.
    static let segmentBursts = [(48_000, 86_400), (163_200, 220_800), (336_000, 403_200)]

    /// Checks one segment that starts at `start` and holds `frames`, for a burst from `burstStart`
    /// to `burstEnd`: it begins at least `preRoll` before the burst (and no more than two blocks
    /// earlier than that), and ends `window` after the burst, give or take the blocks a decision
    /// is rounded to.
    func expectSegment(start: Int, frames: Int, burst: (Int, Int), preRoll: Int, window: Int,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        let end = start + frames
        #expect(start <= burst.0 - preRoll && start >= burst.0 - preRoll - 2 * Self.block,
                "segment starts at \(start), burst at \(burst.0), pre-roll \(preRoll)", sourceLocation: sourceLocation)
        #expect(end >= burst.1 + window - Self.block && end <= burst.1 + window + 2 * Self.block,
                "segment ends at \(end), burst ends at \(burst.1), window \(window)", sourceLocation: sourceLocation)
    }

    @Test func splitOnSilenceWritesOneBitExactFileperSegmentAndStdoutGetsThemBackToBack() throws {
        let rig = try ALSATestRig(input: Self.inputBytes)
        let result = try runHarkIntoPipe(
            ["record", "-D", "filecap", "-d", "11", "--ring-seconds", "20", "--start-above", "-40", "--split-on-silence", "1",
             "--pre-roll", "0.4", "-o", rig.path("seg.flac"), "-o", "-", "--format", "raw"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let names = try FileManager.default.contentsOfDirectory(atPath: rig.directory.path)
            .filter { $0.hasPrefix("seg") }.sorted { ($0.count, $0) < ($1.count, $1) }
        #expect(names == ["seg.flac", "seg-2.flac", "seg-3.flac"], "\(names)")
        #expect(result.standardError.contains("in 3 segments"), "\(result.standardError)")
        #expect(result.standardError.contains("(with 0.400 s before it), a new file after 1 s of silence"), "\(result.standardError)")
        var joined: [Int32] = []
        var segments: [(start: Int, frames: Int)] = []
        for (name, burst) in zip(names, Self.segmentBursts) {
            let path = rig.path(name)
            #expect(try FLACTools.test(path).status == 0, "\(name)")
            let decoded = try FLACTools.decode(path, bitsPerSample: 16)
            let startTag = try FLACTools.tags(path).first { $0.hasPrefix("HARK_FIRST_SAMPLE=") }
            let start = try #require(startTag.flatMap { Int($0.dropFirst("HARK_FIRST_SAMPLE=".count)) }, "\(name)")
            let frames = decoded.count / 2
            expectSegment(start: start, frames: frames, burst: burst, preRoll: 19_200, window: 48_000)
            let expected = Self.inputSamples[(start * 2)..<((start + frames) * 2)]
            expectSameElements(decoded[...], expected, "\(name)")
            segments.append((start, frames))
            joined += decoded
        }
        // Standard output cannot be split: it carries the same segments back to back.
        let streamed = decodeRawSamples(result.standardOutput, bitsPerSample: 16)
        expectSameElements(streamed, joined)

        // The access log: an entry per segment (numbered, with its file and frames) and the
        // recording's own entry, covering the whole time the microphone was open.
        let lines = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let entries = lines.filter { $0["event"] == nil }
        let segmentEntries = entries.filter { $0["segment"] != nil }
        #expect(segmentEntries.compactMap { $0["segment"] as? Int } == [1, 2, 3])
        #expect(segmentEntries.compactMap { $0["frames"] as? Int } == segments.map(\.frames))
        #expect(segmentEntries.compactMap { $0["output"] as? String } == names.map { rig.path($0) }, "\(segmentEntries)")
        let recording = entries.filter { $0["segment"] == nil }
        #expect(recording.count == 1)
        #expect(recording.first?["frames"] as? Int == segments.reduce(0) { $0 + $1.frames })
        #expect(Set(entries.compactMap { $0["id"] as? String }).count == 1, "one recording id for all")
        // Finished, so not an unfinished recording: the segments' entries do not hide that either.
        let unfinished = try runHark(["repair", "--unfinished"], rig: rig)
        #expect(unfinished.status == 0, "\(unfinished.standardError)")
    }

    /// Standard output alone (or a device) cannot be split: the armed line says what it gets instead.
    @Test func stdoutAloneIsToldItGetsTheSoundsBackToBack() throws {
        let rig = try ALSATestRig(input: Self.inputBytes)
        let result = try runHarkIntoPipe(
            ["record", "-D", "filecap", "-d", "11", "--ring-seconds", "20", "--start-above", "-40", "--split-on-silence", "1",
             "-o", "-", "--format", "raw"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("the sounds back to back (silences of 1 s or more left out)")
                && !result.standardError.contains("a new file"), "\(result.standardError)")
        #expect(result.standardError.contains("in 3 segments"), "\(result.standardError)")
        // A device named by -o is written in place like stdout, its segments back to back.
        let besideDevNull = OutputPathTests.filesBesideDevNull()
        let device = try runHark(["record", "-D", "filecap", "-d", "11", "--ring-seconds", "20", "--start-above", "-40",
                                  "--split-on-silence", "1", "-o", "/dev/null", "--format", "raw"], rig: rig)
        #expect(device.status == 0 && device.standardError.contains("the sounds back to back"), "\(device.standardError)")
        #expect(OutputPathTests.filesBesideDevNull().subtracting(besideDevNull).isEmpty, "segments 2 and 3 were files /dev/null-2, -3")
    }

    /// A strftime name: the first segment's file has the plain name (the one taken before any
    /// sound is given back), the next ones a counter; a device output (/dev/null, written in
    /// place) gets the segments too.
    @Test func timeNamesStartWithThePlainNameAndADeviceOutputWorks() throws {
        let rig = try ALSATestRig(input: Self.inputBytes)
        let besideDevNull = OutputPathTests.filesBesideDevNull()
        let result = try runHark(
            ["record", "-D", "filecap", "-d", "11", "--ring-seconds", "20", "--start-above", "-40", "--split-on-silence", "1",
             "-o", rig.path("memo-%Y%m%d.flac"), "-o", "/dev/null", "--format", "raw"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let entries = try FileManager.default.contentsOfDirectory(atPath: rig.directory.path)
        // In recording order, each named for its own first sample's local day (its DATE): a
        // segment after midnight starts that day's names afresh (the unpaced source puts the
        // third segment seconds ahead of the clock, so this test can straddle midnight).
        let files = try entries.filter { $0.hasPrefix("memo-") }.map { name in
            let tags = try FLACTools.tags(rig.path(name))
            let sample = tags.first { $0.hasPrefix("HARK_FIRST_SAMPLE=") } ?? ""
            let day = tags.first { $0.hasPrefix("DATE=") }.map { $0.dropFirst(5).prefix(10).replacingOccurrences(of: "-", with: "") } ?? "?"
            return (sample: sample, day: day, name: name)
        }.sorted { $0.sample < $1.sample }
        var perDay: [String: Int] = [:]
        let expected = files.map { file in
            perDay[file.day, default: 0] += 1
            return perDay[file.day] == 1 ? "memo-\(file.day).flac" : "memo-\(file.day)-\(perDay[file.day]!).flac"
        }
        #expect(files.count == 3 && files.map(\.name) == expected, "\(files)")
        // The device got the segments in place: no file was made beside it (`/dev/null-2`).
        #expect(OutputPathTests.filesBesideDevNull().subtracting(besideDevNull).isEmpty)
        let temporary = entries.filter { $0.hasPrefix(".memo") }
        #expect(temporary.isEmpty, "no temporary file left: \(temporary)")
    }

    @Test func stopAfterEndsTheRecordingAfterTheFirstSilenceInEveryOutput() throws {
        let rig = try ALSATestRig(input: Self.inputBytes)
        let result = try runHark(
            ["record", "-D", "filecap", "-d", "11", "--ring-seconds", "20", "--start-above", "-40", "--stop-after", "1.5",
             "-o", rig.path("talk.wav"), "-o", rig.path("talk.opus")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("in 1 segment to 2 outputs; 0 overruns (0 ms lost); ")
                && result.standardError.contains(" LUFS, true peak ") && result.standardError.contains("; stopped after 1.500 s of silence"),
                "\(result.standardError)")
        // sox reads the WAV (its own parser, not hark's) into its frame count and its samples.
        let sox = try runTool("sox", ["--i", "-s", rig.path("talk.wav")])
        let frames = try #require(Int(String(decoding: sox.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        let raw = try runTool("sox", [rig.path("talk.wav"), "-t", "raw", "-"])
        let samples = decodeRawSamples(raw.standardOutput, bitsPerSample: 16)
        #expect(samples.count == frames * 2)
        // Where in the input the file starts: found by its samples, near the default half second
        // of pre-roll before the first burst.
        let start = try #require(Self.locate(samples, around: Self.bursts[0].0 - 24_000), "the file's audio is not the input's")
        expectSegment(start: start, frames: frames, burst: (Self.bursts[0].0, Self.bursts[0].0 + Self.bursts[0].1),
                      preRoll: 24_000, window: 72_000)
        let expected = Self.inputSamples[(start * 2)..<((start + frames) * 2)]
        expectSameElements(samples[...], expected)
        #expect(try OpusTools.info(rig.path("talk.opus")).isClean)
        let opus = try OpusTools.decode(rig.path("talk.opus"))
        #expect(opus.samples.count / opus.channels == frames, "both outputs hold the same segment")
    }

    /// An armed output's --max-size is its codec's, as when recording at once: WAV fills its limit
    /// (it stopped at half of it, and a 64k Opus was refused, when armed outputs were bounded as
    /// raw PCM with 8192 frames held back).
    @Test func anArmedOutputsSizeLimitIsItsCodecs() throws {
        let rig = try ALSATestRig(input: Self.inputBytes)
        let wav = rig.path("capped.wav"), opus = rig.path("capped.opus")
        let result = try runHark(
            ["record", "-D", "filecap", "-d", "11", "--ring-seconds", "20", "--start-above", "-40",
             "-o", wav, "--max-size", "64k", "-o", opus, "--max-size", "64k", "-o", rig.path("whole.flac")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        // WAV's bound is exact; Opus keeps room for the audio libopusenc holds (up to --max-delay)
        // at the largest packets, and for the packets that pad its end.
        for (path, least) in [(wav, 60_000), (opus, 40_000)] {
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int, "\(path)")
            #expect(size <= 65_536 && size > least, "\(path): \(size) bytes for a 64k limit")
            #expect(MultipleOutputsTests.outputLine(result.standardError, path)?.hasSuffix("; size limit reached") == true, "\(result.standardError)")
        }
        #expect(try OpusTools.info(opus).isClean)
        #expect(try runTool("sox", ["--i", wav]).status == 0)
    }

    /// 30 s of noise at about −70 dBFS: nothing rises above any level a test asks for.
    static var quietInput: Data {
        var noise: [Int32] = []
        noise.reserveCapacity(30 * 48_000 * 2)
        for index in 0..<(30 * 48_000 * 2) { noise.append(Int32(index * 7_919 % 21) - 10) }
        return Data(MusicLikeSignal.alsaBytes(noise, format: .s16LE))
    }

    @Test func aLevelThatNeverRisesLeavesNoFileAndSaysSoOnASignal() throws {
        let rig = try ALSATestRig(input: Self.quietInput)
        try rig.startPulseAudio()
        let output = rig.path("never.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "--start-above", "-30", "-o", output], rig: rig)
        // Armed once the access log says the recording started (its device is open, capture runs).
        try rig.waitForLog(containing: "\"event\":\"started\"")
        usleep(UInt32(TestLoad.seconds(1.5) * 1_000_000))
        recording.send(SIGINT)
        let result = recording.wait(timeout: 20)
        #expect(result.status == 0, "\(result.standardError)")
        let last = result.errorLines.last ?? ""
        #expect(last.hasPrefix("hark: nothing rose above -30.0 dBFS in "), "\(result.standardError)")
        #expect(last.hasSuffix("no audio was written; stopped by SIGINT"), "\(result.standardError)")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: rig.directory.path).filter { $0.contains("never") }
        #expect(leftovers.isEmpty, "no file and no temporary file: \(leftovers)")
        let log = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8)
        #expect(log.contains("\"ended\":\"SIGINT\""), "the open microphone is logged: \(log)")
        #expect(!log.contains("\"segment\""))
    }

    /// A reader that goes away while hark is armed (nothing is written then) ends the output at
    /// once, as a failed write would: the microphone is not kept open for nobody until the next
    /// sound. Raw output, which has no header whose write would fail first.
    @Test func aReaderGoneWhileArmedEndsTheRecordingAtOnce() throws {
        let rig = try ALSATestRig(input: Self.quietInput)
        try rig.startPulseAudio()
        let hark = "'\(harkBinary.path)' record -D pacedcap --start-above -30 -o - --format raw"
        let result = try runTool("bash", ["-c", readerGoneBeforeTheStart(hark)], environment: rig.environment,
                                 timeout: TestLoad.seconds(20))
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.standardError.contains("cannot write the output: the reader closed the pipe"), "\(result.standardError)")
        #expect(!result.standardError.contains("LUFS"), "no loudness for an output that holds nothing: \(result.standardError)")
    }

    /// A source whose first sample comes seconds after it opens (an idle sound-server source takes
    /// 1–2 s; here 3 s, injected in a debug build): each segment's time (its access-log start, as
    /// its file's DATE and strftime name) is when its first sample was captured, the time its
    /// file's HARK_FIRST_SAMPLE_TIME gives too, not the device's open time plus the frames before it.
    @Test func aSegmentIsTimedByItsFirstSampleNotByWhenTheDeviceOpened() throws {
        let rig = try ALSATestRig(input: Self.inputBytes)
        var environment = rig.environment
        environment["HARK_DEBUG_CAPTURE_FAULTS"] = "late@3000"
        let launched = Date()
        let result = try RunningProcess(
            harkBinary, ["record", "-D", "filecap", "-d", "11", "--ring-seconds", "20", "--start-above", "-40",
                         "--split-on-silence", "1", "-o", rig.path("late.flac")],
            environment: environment, scratch: rig.directory).wait(timeout: 60)
        #expect(result.status == 0, "\(result.standardError)")
        let segments = try String(contentsOfFile: rig.accessLogFile, encoding: .utf8).split(separator: "\n")
            .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            .filter { $0["segment"] != nil }
        #expect(segments.count == 3, "\(segments)")
        let whole = ISO8601DateFormatter(), fractional = ISO8601DateFormatter()
        fractional.formatOptions.insert(.withFractionalSeconds)
        for segment in segments {
            let path = try #require(segment["output"] as? String)
            let logged = try #require((segment["start"] as? String).flatMap(whole.date(from:)), "\(segment)")
            let tag = try FLACTools.tags(path).first { $0.hasPrefix("HARK_FIRST_SAMPLE_TIME=") }
            let firstSample = try #require(tag.flatMap { fractional.date(from: String($0.dropFirst("HARK_FIRST_SAMPLE_TIME=".count))) },
                                           "\(path): \(String(describing: tag))")
            // Both come from the same stamp, so they also agree if it were the open time: the first
            // sample came 3 s after the first read at the earliest, less the device's buffer.
            #expect(firstSample.timeIntervalSince(launched) >= 2, "\(path): first sample \(firstSample), hark launched \(launched)")
            // The log keeps whole seconds; the open time would be 2.5–3 s early.
            #expect(abs(logged.timeIntervalSince1970 - firstSample.timeIntervalSince1970.rounded(.down)) <= 1,
                    "\(path): logged \(logged), first sample \(firstSample)")
        }
    }

    /// On a terminal the status line says "◌ ARMED" with the level being compared, then "● REC"
    /// with the segment count once the sound comes (paced: 3 s of near-silence, then music).
    @Test func theStatusLineShowsArmedThenRecording() throws {
        let music = MusicLikeSignal.samples(frames: 12 * 48_000, channels: 2, sampleRate: 48_000, bits: 16)
        var samples: [Int32] = []
        samples.reserveCapacity(15 * 48_000 * 2)
        for index in 0..<(3 * 48_000 * 2) { samples.append(Int32(index * 7_919 % 21) - 10) }
        for sample in music { samples.append(sample / 2) }
        let rig = try ALSATestRig(input: Data(MusicLikeSignal.alsaBytes(samples, format: .s16LE)))
        try rig.startPulseAudio()
        let output = rig.path("heard.flac")
        let terminal = try TerminalSession(harkCommand(["record", "-D", "pacedcap", "--start-above", "-40", "-o", output]),
                                           rig: rig, columns: 160)
        #expect(terminal.waitFor("ARMED  pacedcap", timeout: TestLoad.seconds(20)), "\(terminal.screen)")
        #expect(!FileManager.default.fileExists(atPath: output), "no file while armed")
        #expect(terminal.waitFor("seg 1", timeout: TestLoad.seconds(20)), "\(terminal.screen)")
        #expect(terminal.screen.contains("REC  pacedcap"), "\(terminal.screen)")
        terminal.type("\u{03}")
        let result = terminal.finish(timeout: 20)
        #expect(result.status == 0, "\(result.screen)")
        #expect(result.screen.contains("in 1 segment,"), "\(result.screen)")
        #expect(try FLACTools.test(output).status == 0)
    }

    /// The status line follows the first output still running: once the first one has reached its
    /// --max-size (in the first segment), the armed state and the segment count are the next
    /// one's, so the later segments show (they stayed at "seg 1" before).
    @Test func theStatusLineGoesOnWhenTheFirstOutputEndsEarly() throws {
        let rig = try ALSATestRig(input: Self.inputBytes)
        try rig.startPulseAudio()
        let terminal = try TerminalSession(harkCommand(["record", "-D", "pacedcap", "-d", "10", "--start-above", "-40", "--split-on-silence", "1",
                                                        "-o", rig.path("short.wav"), "--max-size", "64k", "-o", rig.path("whole.flac")]),
                                           rig: rig, columns: 200)
        let result = terminal.finish(timeout: TestLoad.seconds(40))
        #expect(result.status == 0, "\(result.screen)")
        #expect(result.screen.contains("; size limit reached"), "\(result.screen)")
        // The third segment runs from about 6.5 s to the end, long enough to be drawn however
        // late the encoder is. (Not the armed state between segments: an encoder that fell a
        // second behind decides the end of one and the start of the next in one drain.)
        #expect(result.screen.contains("seg 3"), "\(result.screen)")
    }

    /// A killed armed hark wrote nothing, so nothing is unfinished; one killed in a segment left
    /// that segment's file, which `hark repair --unfinished` finds through its `file` event. The
    /// sound comes after 5 s of near-silence: the kill of the armed hark must land before it, and
    /// the test sees the armed hark's log entry at once, but on a loaded machine "at once" may be
    /// a second or more.
    @Test func killedBeforeAnySoundNothingIsUnfinishedKilledInASegmentItsFileIs() throws {
        var samples: [Int32] = []
        for index in 0..<(5 * 48_000 * 2) { samples.append(Int32(index * 7_919 % 21) - 10) }
        for sample in MusicLikeSignal.samples(frames: 20 * 48_000, channels: 2, sampleRate: 48_000, bits: 16) { samples.append(sample / 2) }
        let rig = try ALSATestRig(input: Data(MusicLikeSignal.alsaBytes(samples, format: .s16LE)))
        try rig.startPulseAudio()
        let output = rig.path("killed.flac")
        let early = try startHark(["record", "-D", "pacedcap", "--start-above", "-40", "-o", output], rig: rig)
        try rig.waitForLog(containing: "\"armed\":true")
        early.send(SIGKILL)
        _ = early.wait(timeout: 10)
        let none = try runHark(["repair", "--unfinished"], rig: rig)
        #expect(none.status == 0 && none.standardError.contains("no unfinished recordings"), "\(none.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output))

        let late = try startHark(["record", "-D", "pacedcap", "--start-above", "-40", "-o", output], rig: rig)
        try rig.waitForLog(containing: "\"event\":\"file\"")
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        late.send(SIGKILL)
        _ = late.wait(timeout: 10)
        let found = try runHark(["repair", "--unfinished"], rig: rig)
        #expect(found.standardError.contains(output), "\(found.standardError)")
        let repaired = try runHark(["repair", "--unfinished", "--write"], rig: rig)
        #expect(repaired.status == 1, "\(repaired.standardError)")
        #expect(try FLACTools.test(output).status == 0)
    }

    @Test(arguments: [
        (["--stop-after", "5"], "--stop-after needs --start-above LEVEL"),
        (["--pre-roll", "1"], "--pre-roll needs --start-above LEVEL"),
        (["--start-above", "3"], "--start-above 3.0 must be at least -90 and below 0 dBFS (full scale)"),
        (["--start-above", "0"], "--start-above 0.0 must be at least -90 and below 0 dBFS (full scale)"),
        (["--start-above", "-90.5"], "--start-above -90.5 must be at least -90 and below 0 dBFS (full scale)"),
        (["--start-above", "-40", "--stop-after", "1", "--split-on-silence", "2"], "--stop-after 1 must be longer than --split-on-silence 2"),
        (["--start-above", "-40", "--split-on-silence", "20ms"], "--split-on-silence 20ms is outside 0.1 s–24 h"),
        (["--start-above", "-40", "--pre-roll", "31"], "--pre-roll 31 is over the 30 s maximum"),
        (["--start-above", "-40", "--stop-after", "soon"], "--stop-after"),
    ])
    func usageErrors(arguments: [String], message: String) throws {
        let rig = try ALSATestRig(input: Data(count: 4 * 4_800))
        let result = try runHark(["record", "-D", "filecap", "-d", "0.1", "-o", rig.path("x.flac")] + arguments, rig: rig)
        #expect(result.status == 64, "\(result.standardError)")
        #expect(result.standardError.contains(message), "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: rig.path("x.flac")))
    }

    /// The input frame at which `samples` begin, searched within three blocks either side of
    /// `frame`; nil when they begin nowhere there.
    static func locate(_ samples: [Int32], around frame: Int) -> Int? {
        let probe = samples.prefix(4_000)
        return ((frame - 3 * block)...(frame + 3 * block)).first { start in
            start >= 0 && inputSamples[(start * 2)..<(start * 2 + probe.count)].elementsEqual(probe)
        }
    }
}
