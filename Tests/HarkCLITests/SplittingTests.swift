import AudioFormat
import Foundation
import Testing

/// `--max-file-time`, strftime names, SIGUSR1 and `--max-size`: every part decodes on its own,
/// and the parts played back to back are the input, frame for frame (bit-exact for FLAC).
@Suite struct SplittingTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    /// The files in the rig's directory whose names start with `prefix`, sorted as hark numbers them.
    func parts(_ rig: ALSATestRig, prefix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: rig.directory.path)
            .filter { $0.hasPrefix(prefix) && !$0.contains(".decoded") }
            .sorted { ($0.count, $0) < ($1.count, $1) }
    }

    @Test func maxFileTimeSplitsFLACIntoFilesThatAddUpBitExact() throws {
        let signal = TestSignal(format: Self.format, frames: 26 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let result = try runHark(["record", "-D", "filecap", "-d", "25", "--max-file-time", "10", "-o", rig.path("part.flac")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let names = try parts(rig, prefix: "part")
        #expect(names == ["part.flac", "part-2.flac", "part-3.flac"])
        #expect(result.standardError.contains("to \(rig.path("part.flac")), \(rig.path("part-2.flac")), \(rig.path("part-3.flac"));"),
                "\(result.standardError)")
        var joined: [Int32] = []
        for (name, frames) in zip(names, [480_000, 480_000, 240_000]) {
            #expect(try FLACTools.test(rig.path(name)).status == 0, "\(name)")
            #expect(try FLACTools.totalSamples(rig.path(name)) == frames, "\(name)")
            joined += try FLACTools.decode(rig.path(name), bitsPerSample: 16)
        }
        expectSameElements(joined[...], signal.prefix(frames: 25 * 48_000))
    }

    @Test func opusPartsEachEndCleanlyAndAddUpToTheInputsLength() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 13 * 48_000).alsaBytes)
        let result = try runHark(["record", "-D", "filecap", "-d", "12", "--max-file-time", "5", "-o", rig.path("talk.opus")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let names = try parts(rig, prefix: "talk")
        #expect(names == ["talk.opus", "talk-2.opus", "talk-3.opus"])
        var lengths: [Int] = []
        for name in names {
            #expect(try OpusTools.info(rig.path(name)).isClean, "\(name)")
            let decoded = try OpusTools.decode(rig.path(name))
            lengths.append(decoded.samples.count / decoded.channels)
        }
        #expect(lengths == [240_000, 240_000, 96_000])
    }

    @Test func strftimePatternsNameThePartsAndRepeatedNamesGetACounter() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 13 * 48_000).alsaBytes)
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyyMMdd-HHmm"
        // A part is named when its first sample was captured: the first sample's time plus the
        // frames before it, 0, 5 and 10 s into the recording (unpaced, they are written within
        // a second or two). Same minute, same name, so a counter. A run whose 12 s cross a minute
        // boundary may rightly name its parts after two minutes and shows no counter; it is run
        // once more, after waiting (when needed) until the next 15 s fit in one minute (the first
        // sample comes within seconds of the start, however slow the machine).
        var result: ToolResult
        var names: [String]
        var stamps: Set<String>
        var attempts = 0
        repeat {
            for name in try parts(rig, prefix: "rec-") { try FileManager.default.removeItem(atPath: rig.path(name)) }
            attempts += 1
            let second = Calendar.current.component(.second, from: Date())
            if second > 40 { usleep(useconds_t((61 - second) * 1_000_000)) }
            let before = Date()
            result = try runHark(["record", "-D", "filecap", "-d", "12", "--max-file-time", "5s",
                                  "-o", rig.path("rec-%Y%m%d-%H%M.flac")], rig: rig)
            stamps = Set([before, before.addingTimeInterval(15)].map { "rec-" + formatter.string(from: $0) })
            names = try parts(rig, prefix: "rec-")
        } while stamps.count > 1 && attempts < 2
        #expect(stamps.count == 1, "the second run crossed a minute boundary too: \(stamps)")
        #expect(result.status == 0, "\(result.standardError)")
        #expect(names.count == 3, "\(names)")
        let base = try #require(names.first?.replacingOccurrences(of: ".flac", with: ""))
        #expect(stamps.contains(base), "\(names) vs \(stamps)")
        #expect(names == [base + ".flac", base + "-2.flac", base + "-3.flac"])
        #expect(!result.standardError.contains("%"), "the notices name the real files: \(result.standardError)")
    }

    @Test func sigusr1StartsANewFileAtOnceWithoutLosingAFrame() throws {
        let signal = TestSignal(format: Self.format, frames: 10 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "6", "-o", rig.path("memo.flac")], rig: rig)
        // A split takes effect at the encoder's next frame: each part already holds 0.7 s of audio
        // when the signal that ends it is sent, and the 6 s leave the third part several seconds.
        try OutputGrowth.waitForFLACAudio(rig.path("memo.flac"), seconds: 0.7)
        recording.send(SIGUSR1)
        try OutputGrowth.waitForFLACAudio(rig.path("memo-2.flac"), seconds: 0.7)
        recording.send(SIGUSR1)
        let result = recording.wait(timeout: 20)
        #expect(result.status == 0, "\(result.standardError)")
        let names = try parts(rig, prefix: "memo")
        #expect(names == ["memo.flac", "memo-2.flac", "memo-3.flac"])
        var joined: [Int32] = []
        for name in names {
            let part = try FLACTools.decode(rig.path(name), bitsPerSample: 16)
            #expect(part.count >= 24_000 * 2, "\(name) holds at least half a second: \(part.count / 2) frames")
            joined += part
        }
        expectSameElements(joined[...], signal.prefix(frames: 6 * 48_000), "hark said: \(result.errorLines.last ?? "")")
    }

    /// Each SIGUSR1 splits every output at the same frame, one the capture had reached when it
    /// came, however far behind an output's encoder is (unpaced, with a minute of ring, the Opus
    /// encoder lags a minute): each split where its own encoder happened to be, seconds apart.
    /// A second signal before the lagging encoder reached the first split splits it too (only one
    /// split could be pending: the Opus output got two files, the others three). A split part's
    /// DATE is when its first sample was captured, as its HARK_FIRST_SAMPLE_TIME says (it was when
    /// the file was opened).
    @Test func sigusr1SplitsEveryOutputAtTheSameFrameDatedByItsFirstSample() throws {
        let signal = TestSignal(format: Self.format, frames: 181 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let recording = try startHark(["record", "-D", "filecap", "-d", "180", "--ring-seconds", "60", "--no-loudness",
                                       "-o", rig.path("a.flac"), "-o", rig.path("b.opus"), "-o", rig.path("c.wav")], rig: rig)
        try OutputGrowth.waitForFLACAudio(rig.path("a.flac"), seconds: 1)
        recording.send(SIGUSR1)
        // The second once the capture is past the first (the FLAC part has audio), while the
        // Opus encoder is still up to the ring behind it. Capture goes on until the Opus encoder
        // is a minute from the end: two minutes of Opus encoding (seconds) for the second signal
        // to come in.
        try OutputGrowth.waitForFLACAudio(rig.path("a-2.flac"), seconds: 0.1)
        recording.send(SIGUSR1)
        let result = recording.wait(timeout: TestLoad.seconds(180))
        #expect(result.status == 0, "\(result.standardError)")
        let files = try parts(rig, prefix: "")
        // Capture goes on for seconds after the second signal is sent; were it over by then (a
        // machine loaded beyond that), the signal rightly splits nothing, in every output alike.
        let secondTaken = files.contains("a-3.flac")
        if !secondTaken { print("SplittingTests: the second SIGUSR1 came after capture ended") }
        let expected = ["a.flac", "a-2.flac", "b.opus", "b-2.opus", "c.wav", "c-2.wav"]
            + (secondTaken ? ["a-3.flac", "b-3.opus", "c-3.wav"] : [])
        #expect(Set(files.filter { name in [".flac", ".opus", ".wav"].contains { name.hasSuffix($0) } })
                == Set(expected), "\(files)")
        func tag(_ key: String, in tags: [String]) -> String? { tags.first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) } }
        func wavFrames(_ name: String) throws -> Int? {
            let sox = try runTool("sox", ["--i", "-s", rig.path(name)])
            return Int(String(decoding: sox.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        var splits: [[Int?]] = []
        for part in secondTaken ? ["2", "3"] : ["2"] {
            let flacSplit = tag("HARK_FIRST_SAMPLE", in: try FLACTools.tags(rig.path("a-\(part).flac"))).flatMap { Int($0) }
            let opusSplit = tag("HARK_FIRST_SAMPLE", in: try OpusTools.tags(rig.path("b-\(part).opus")).comments).flatMap { Int($0) }
            let wavSplit = part == "2" ? try wavFrames("c.wav") : try wavFrames("c.wav").flatMap { first in try wavFrames("c-2.wav").map { first + $0 } }
            splits.append([flacSplit, opusSplit, wavSplit])
        }
        #expect(splits.allSatisfy { split in split[0] != nil && split.allSatisfy { $0 == split[0] } }, "split at (FLAC, Opus, WAV) \(splits)")
        let flacSplits = splits.map { $0[0] ?? 0 }
        #expect(0 < flacSplits[0] && flacSplits.last! < 180 * 48_000 && (flacSplits.count == 1 || flacSplits[0] < flacSplits[1]),
                "\(flacSplits)")
        let flacTags = try FLACTools.tags(rig.path("a-2.flac"))
        // DATE (local time, to the second) is the second of HARK_FIRST_SAMPLE_TIME (UTC, to the µs).
        let date = try #require(tag("DATE", in: flacTags).flatMap { ISO8601DateFormatter().date(from: $0) }, "\(flacTags)")
        let precise = ISO8601DateFormatter()
        precise.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let first = try #require(tag("HARK_FIRST_SAMPLE_TIME", in: flacTags).flatMap { precise.date(from: $0) }, "\(flacTags)")
        #expect(date.timeIntervalSince1970 == first.timeIntervalSince1970.rounded(.down), "DATE \(date), first sample \(first)")
    }

    /// `--max-size` keeps one header in reserve for a file starting among the frames it lets
    /// through. An encoder behind (here held back 1.5 s, as a stalled disk or a loaded machine
    /// holds it) found seconds of audio in its ring at one drain, and with `--max-file-time 1`
    /// several files started in it: the parts together passed the limit by a header each. A
    /// drain now stops at a second file's start, and the parts stay under the limit.
    @Test func maxSizeHoldsWhenAnEncoderBehindStartsSeveralFilesInOneDrain() throws {
        let signal = TestSignal(format: Self.format, frames: 8 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        rig.extraEnvironment["HARK_DEBUG_ENCODER_START_DELAY_MS"] = "1500"
        let limit = 600 * 1024  // a little over three seconds of WAV: reached in the first drain
        let result = try runHark(["record", "-D", "filecap", "--ring-seconds", "8", "--max-file-time", "1",
                                  "--max-size", "600k", "-o", rig.path("part.wav")], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("; size limit reached"), "\(result.standardError)")
        let parts = try FileManager.default.contentsOfDirectory(atPath: rig.directory.path).filter { $0.hasPrefix("part") }
        #expect(parts.count >= 3, "\(parts)")
        let total = try parts.reduce(0) { sum, name in
            sum + (try FileManager.default.attributesOfItem(atPath: rig.path(name))[.size] as? Int ?? 0)
        }
        #expect(total <= limit && total > limit * 9 / 10, "\(total) bytes in \(parts.count) parts for a \(limit)-byte limit")
        #expect(result.standardError.contains(" \(total) bytes to "), "the summary counts every part: \(result.standardError)")
    }

    @Test(arguments: ["flac", "opus"])
    func maxSizeStopsCleanlyJustUnderTheSize(codec: String) throws {
        let signal = TestSignal(format: Self.format, frames: 61 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("capped.\(codec)")
        let limit = codec == "flac" ? 1_048_576 : 262_144
        let result = try runHark(["record", "-D", "filecap", "-d", "60", "--max-size", codec == "flac" ? "1M" : "256k",
                                  "-o", output], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("; size limit reached"), "\(result.standardError)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int)
        #expect(size <= limit && size > limit * 8 / 10, "\(size) bytes for a \(limit)-byte limit")
        #expect(result.standardError.contains(" \(size) bytes to "), "the summary counts the whole file: \(result.standardError)")
        if codec == "flac" {
            let total = try expectFinishedPrefix(output, of: signal)
            #expect(result.standardError.contains("\(total) frames"))
        } else {
            #expect(try OpusTools.info(output).isClean)
        }
    }

    /// Opus at its largest packets stays under `--max-size` too: 512 kb/s in 20 ms packets (one
    /// 1275-byte frame each, as hard CBR fills them), in 60 ms ones (three frames: the bound of
    /// one frame a packet let 102 kB into a 64k file), 5.1 (four streams a packet), and a muxing
    /// delay of a second (libopusenc writes its audio only then; 8192 frames were kept free for
    /// it, 200 ms by default passed the limit by a packet).
    /// (A second's delay, or four streams, need more than 64k: their reserve alone is near it.)
    /// And 8 kHz input, which libopus encodes at 48 kHz: at 512 kb/s its packets cost twice the
    /// raw audio, which capped the bound.
    @Test(arguments: [(["--hard-cbr"], 64), (["--frame-size", "60"], 64), (["-c", "6", "--channel-map", "FL,FR,FC,LFE,RL,RR"], 160),
                      (["--max-delay", "1000"], 160), (["-r", "8000", "--hard-cbr"], 64)])
    func opusAtItsLargestPacketsStaysUnderTheSize(options: [String], kibibytes: Int) throws {
        let channels = options.contains("-c") ? 6 : 2
        let signal = TestSignal(format: PCMFormat(sampleFormat: .s16LE, channels: channels, sampleRate: 48_000), frames: 20 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("large.opus")
        let limit = kibibytes * 1024
        let result = try runHark(["record", "-D", "filecap", "-c", "\(channels)", "-d", "20", "--bitrate", "512",
                                  "--max-size", "\(kibibytes)k", "-o", output] + options, rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("; size limit reached"), "\(result.standardError)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int)
        #expect(size <= limit && size > limit / 3, "\(size) bytes for a \(limit)-byte limit")
        #expect(try OpusTools.info(output).isClean)
    }

    /// A --max-size under what the output needs for its header, one period and what its encoder may
    /// hold back (eight channels of S32 FLAC: hundreds of kB) is refused with the size that does,
    /// nothing left behind; at that size, at least a period records and the file is under it.
    @Test func aMaxSizeThatCannotHoldAPeriodIsRefusedWithTheSmallestThatCan() throws {
        let format = PCMFormat(sampleFormat: .s32LE, channels: 8, sampleRate: 48_000)
        let signal = TestSignal(format: format, frames: 2 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let flac = rig.path("small.flac"), wav = rig.path("other.wav")
        let capture = ["record", "-D", "filecap", "-c", "8", "-f", "S32_LE", "-d", "1"]
        let refused = try runHark(capture + ["-o", flac, "--max-size", "400k", "-o", wav], rig: rig)
        #expect(refused.status == 64, "\(refused.standardError)")
        #expect(refused.errorLines.count == 1 && refused.errorLines[0].hasPrefix("hark: output \(flac): --max-size 400k cannot hold any audio"),
                "\(refused.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: rig.directory.path).filter { $0.hasSuffix(".flac") || $0.hasSuffix(".wav") }.isEmpty)

        let named = try #require(refused.standardError.range(of: #"at least [0-9]+k"#, options: .regularExpression).map { refused.standardError[$0] })
        let smallest = try #require(Int(named.dropFirst("at least ".count).dropLast()))
        let recorded = try runHark(capture + ["-o", flac, "--max-size", "\(smallest)k"], rig: rig)
        #expect(recorded.status == 0 && recorded.standardError.contains("; size limit reached"), "\(recorded.standardError)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: flac)[.size] as? Int)
        #expect(size <= smallest * 1024, "\(size) bytes for \(smallest)k")
        #expect(try expectFinishedPrefix(flac, of: signal) >= 6_000, "a period (125 ms) at least")
    }

    @Test func maxFileTimeCannotSplitStdout() throws {
        let rig = try ALSATestRig(input: Data())
        let result = try runHark(["record", "-D", "filecap", "--max-file-time", "10", "-o", "-"], rig: rig)
        #expect(result.status == 64)
        #expect(result.errorLines.count == 1 && result.standardError.contains("cannot split stdout"), "\(result.standardError)")
    }
}
