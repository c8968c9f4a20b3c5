import AudioFormat
import Foundation
import Testing

/// Tags (Vorbis comments) in both codecs, read back with the reference tools (`metaflac`,
/// `opusinfo`): the user's own from `--tag` and the shorthands, and hark's DATE, ENCODER and
/// HARK_CAPTURE, which a user's key replaces and `--no-auto-tags` trims.
@Suite struct TagTests {
    enum Codec: String, CaseIterable, Sendable {
        case flac, opus

        /// The loudness tags hark adds to a file (written over placeholders when it ends).
        var loudnessKeys: [Substring] {
            self == .flac ? ["REPLAYGAIN_TRACK_GAIN", "REPLAYGAIN_TRACK_PEAK"] : ["R128_TRACK_GAIN"]
        }
    }

    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    /// Records one second to `take.<codec>` with `arguments` and returns the file's tags in order.
    private func record(_ codec: Codec, _ arguments: [String], rig: ALSATestRig? = nil,
                        environment: [String: String] = [:]) throws -> (tags: [String], result: ToolResult) {
        let rig = try rig ?? ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes)
        let output = rig.path("take.\(codec.rawValue)")
        let result = try RunningProcess(harkBinary, ["record", "-D", "filecap", "-d", "1", "-o", output] + arguments,
                                        environment: rig.environment.merging(environment) { $1 }, scratch: rig.directory)
            .wait()
        #expect(result.status == 0, "\(result.standardError)")
        let tags = codec == .flac ? try FLACTools.tags(output) : try OpusTools.tags(output).comments
        return (tags, result)
    }

    /// The value of the only `key=` entry, failing if there is none or more than one.
    private func onlyValue(of key: String, in tags: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let values = tags.filter { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
        #expect(values.count == 1, "\(key) in \(tags)", sourceLocation: sourceLocation)
        return try #require(values.first, sourceLocation: sourceLocation)
    }

    @Test(arguments: Codec.allCases)
    func shorthandsAndTagsAreWrittenInOrderBeforeHarksOwn(_ codec: Codec) throws {
        let (tags, _) = try record(codec, [
            "--tag", "genre=Speech", "--title", "Café – 東京", "--artist", "Ada", "--album", "Q4 reviews",
            "--comment", "first take; 2 mics", "--tag", "ARTIST=Grace", "--tag", "Empty=", "--tag", "NOTE=a=b",
        ])
        // Shorthands first, then each --tag as given (keys upper-cased; a value may hold '=' or
        // nothing), then hark's three.
        #expect(Array(tags.prefix(8)) == [
            "TITLE=Café – 東京", "ARTIST=Ada", "ALBUM=Q4 reviews", "COMMENT=first take; 2 mics",
            "GENRE=Speech", "ARTIST=Grace", "EMPTY=", "NOTE=a=b",
        ], "\(tags)")
        #expect(tags.dropFirst(8).map { $0.prefix { $0 != "=" } }
                == ["DATE", "ENCODER", "HARK_CAPTURE", "HARK_FIRST_SAMPLE_TIME", "HARK_FIRST_SAMPLE", "HARK_CLOCK_DRIFT_PPM"]
                    + codec.loudnessKeys, "\(tags)")
    }

    @Test(arguments: Codec.allCases)
    func dateIsTheStartInLocalTimeWithTheZonesOffset(_ codec: Codec) throws {
        let before = Date()
        // A POSIX TZ rule needs no zone database: India, 5:30 east of UTC, no daylight saving.
        let (tags, _) = try record(codec, [], environment: ["TZ": "IST-5:30"])
        let date = try onlyValue(of: "DATE", in: tags)
        #expect(date.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+05:30/) != nil, "\(date)")
        let parsed = try #require(ISO8601DateFormatter().date(from: date), "\(date)")
        // Whole seconds, rounded down: up to a second before `before`; and well within a minute.
        #expect(parsed.timeIntervalSince(before) > -1.5 && parsed.timeIntervalSince(before) < 60, "\(date) vs \(before)")

        let (utcTags, _) = try record(codec, [], environment: ["TZ": "UTC"])
        #expect(try onlyValue(of: "DATE", in: utcTags).hasSuffix("+00:00"))
    }

    @Test(arguments: Codec.allCases)
    func encoderNamesHarkAndTheCodecLibraries(_ codec: Codec) throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes)
        let version = String(decoding: try runHark(["--version"], rig: rig).standardOutput, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!version.isEmpty)
        let (tags, _) = try record(codec, [], rig: rig)
        let encoder = try onlyValue(of: "ENCODER", in: tags)
        // The versions of the libraries hark was built against, as their -dev packages state them.
        let libraries = switch codec {
        case .flac: "libFLAC \(try packageVersion("flac"))"
        case .opus: "libopus \(try packageVersion("opus")), libopusenc \(try packageVersion("libopusenc"))"
        }
        #expect(encoder == "hark \(version) (\(libraries))")
        // The vendor strings the libraries write themselves, which no option changes.
        switch codec {
        case .flac: #expect(try FLACTools.vendor(rig.path("take.flac"))?.hasPrefix("reference \(libraries) ") == true)
        case .opus: #expect(try OpusTools.tags(rig.path("take.opus")).vendor == libraries)
        }
    }

    @Test(arguments: Codec.allCases)
    func captureTagStatesWhatTheDeviceNegotiated(_ codec: Codec) throws {
        let format = PCMFormat(sampleFormat: .s24LE, channels: 1, sampleRate: 44_100)
        let rig = try ALSATestRig(input: TestSignal(format: format, frames: 44_100).alsaBytes)
        let (tags, result) = try record(codec, ["-v", "-r", "44100", "-c", "1", "-f", "S24_LE",
                                                "--period-time", "50000", "--buffer-time", "200000"], rig: rig)
        // -v: "device 'filecap': S24_LE, 1 ch, 44100 Hz, period 2205 frames (50.0 ms), buffer 8820 frames (200.0 ms)"
        let negotiated = try #require(result.standardError.firstMatch(of: /period (\d+) frames .*, buffer (\d+) frames/),
                                      "\(result.standardError)")
        #expect(try onlyValue(of: "HARK_CAPTURE", in: tags) == "format=S24_LE rate=44100 channels=1 "
                + "period_frames=\(negotiated.1) buffer_frames=\(negotiated.2) device=filecap")
    }

    @Test(arguments: Codec.allCases)
    func noAutoTagsLeavesOutDateAndCaptureButKeepsEncoder(_ codec: Codec) throws {
        let (tags, _) = try record(codec, ["--no-auto-tags", "--title", "Standup"])
        // The loudness tags stay: they describe the audio, not where or when it was recorded.
        #expect(tags.count == 2 + codec.loudnessKeys.count && tags[0] == "TITLE=Standup" && tags[1].hasPrefix("ENCODER=hark "), "\(tags)")
        #expect(tags.dropFirst(2).map { $0.prefix { $0 != "=" } } == codec.loudnessKeys, "\(tags)")
    }

    @Test(arguments: Codec.allCases)
    func theUsersKeysReplaceHarksOwn(_ codec: Codec) throws {
        let (tags, _) = try record(codec, ["--tag", "date=2026-01-01", "--tag", "Encoder=my rig",
                                           "--tag", "HARK_CAPTURE=", "--title", "T"])
        #expect(Array(tags.prefix(4)) == ["TITLE=T", "DATE=2026-01-01", "ENCODER=my rig", "HARK_CAPTURE="])
        #expect(tags.dropFirst(4).map { $0.prefix { $0 != "=" } } == ["HARK_FIRST_SAMPLE_TIME", "HARK_FIRST_SAMPLE", "HARK_CLOCK_DRIFT_PPM"]
                    + codec.loudnessKeys, "\(tags)")
    }

    /// hark's values at the end go into its own tags, found by the header's structure: behind
    /// 300 kB of the user's tags (cover art, long notes), where they were left as placeholders,
    /// the file "never finished"; an Opus file whose OpusTags pages ran past the 256 KiB then
    /// searched kept a page with a stale CRC and did not play) and never into a tag of the user's
    /// that reads like a placeholder (the first such text was written over: the user's own gain).
    @Test(arguments: Codec.allCases)
    func harksValuesGoIntoItsOwnTagsBehindLargeTagsAndLookalikes(_ codec: Codec) throws {
        let large = String(repeating: "x", count: 100_000)
        let lookalike = codec == .flac ? "REPLAYGAIN_TRACK_GAIN=+0.000 dB" : "R128_TRACK_GAIN=+00000"
        let comment = "\(lookalike) HARK_FIRST_SAMPLE_TIME=0000-00-00T00:00:00.000000Z HARK_CLOCK_DRIFT_PPM=unmeasured"
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes)
        let output = rig.path("take.\(codec.rawValue)")
        let (tags, _) = try record(codec, ["--tag", "A=\(large)", "--tag", "B=\(large)", "--tag", "C=\(large)",
                                           "--tag", lookalike, "--comment", comment], rig: rig)
        // (Messages name the tags without the 100 kB values.)
        let user = ["A=\(large)", "B=\(large)", "C=\(large)", lookalike, "COMMENT=\(comment)"]
        #expect(user.allSatisfy { tags.contains($0) }, "the user's tags as given: \(tags.map { $0.prefix(80) })")
        let time = try onlyValue(of: "HARK_FIRST_SAMPLE_TIME", in: tags)
        #expect(time != "0000-00-00T00:00:00.000000Z" && time.hasSuffix("Z"), "\(time)")
        _ = try onlyValue(of: "HARK_CLOCK_DRIFT_PPM", in: tags)
        let (lookalikeKey, lookalikeValue) = (String(lookalike.prefix { $0 != "=" }), String(lookalike.drop { $0 != "=" }.dropFirst()))
        #expect(try onlyValue(of: lookalikeKey, in: tags) == lookalikeValue, "the user's, not measured over")
        if codec == .flac {
            #expect(try onlyValue(of: "REPLAYGAIN_TRACK_PEAK", in: tags) != "0.000000")
            #expect(try FLACTools.test(output).status == 0)
        } else {
            let info = try OpusTools.info(output)
            #expect(info.isClean, "\(info.text)")
            #expect(try OpusTools.decode(output).samples.count == 48_000 * 2)
        }
    }

    /// The version pkg-config reports for a library's -dev package, e.g. "1.4.2" for flac.
    private func packageVersion(_ module: String) throws -> String {
        let result = try runTool("pkg-config", ["--modversion", module])
        #expect(result.status == 0, "\(result.standardError)")
        return String(decoding: result.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
