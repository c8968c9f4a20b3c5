import AudioFormat
import Foundation
import Testing

/// Surround: each input channel carries a tone of its own, recorded with `--channel-map` naming the
/// device's order; decoded by the peers' tools, each speaker's tone must come out in the channel
/// that format puts that speaker in.
@Suite struct SurroundTests {
    /// The tone for a speaker: distinct, and apart enough for a Goertzel filter to tell.
    static let tones: [SpeakerPosition: Double] = [
        .frontLeft: 300, .frontRight: 500, .frontCenter: 700, .lowFrequency: 110, .rearLeft: 1100, .rearRight: 1300,
        .sideLeft: 1700, .sideRight: 1900, .rearCenter: 2300, .frontLeftCenter: 2900, .frontRightCenter: 3100,
    ]

    /// `seconds` of S16_LE at 48 kHz, channel `i` playing `layout.positions[i]`'s tone.
    static func input(_ layout: [SpeakerPosition], seconds: Double) -> Data {
        let frames = Int(seconds * 48_000)
        var data = Data(capacity: frames * layout.count * 2)
        for frame in 0..<frames {
            for position in layout {
                let value = Int16(8_000 * sin(2 * Double.pi * tones[position]! * Double(frame) / 48_000))
                withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
            }
        }
        return data
    }

    /// The tone (of `tones`) in channel `channel` of interleaved S16 `samples`: the strongest, which
    /// must be there (within 30 dB of the level written) and 10 dB above every other tone; a
    /// silent or mixed channel throws (without this, a silent channel named whichever speaker the
    /// dictionary's order put first).
    static func dominantTone(_ samples: [Int16], channels: Int, channel: Int) throws -> SpeakerPosition {
        let frames = min(samples.count / channels, 24_000)
        let start = samples.count / channels - frames  // the end: past any codec start-up
        func power(_ frequency: Double) -> Double {
            let coefficient = 2 * cos(2 * Double.pi * frequency / 48_000)
            var (previous, beforePrevious) = (0.0, 0.0)
            for frame in start..<(start + frames) {
                let current = Double(samples[frame * channels + channel]) + coefficient * previous - beforePrevious
                beforePrevious = previous
                previous = current
            }
            return previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        }
        let powers = tones.map { (speaker: $0.key, power: power($0.value)) }.sorted { $0.power > $1.power }
        // A tone of amplitude 8000 over `frames` frames has about (8000 · frames / 2)² here.
        let written = pow(8_000 * Double(frames) / 2, 2)
        guard powers[0].power >= written / 1_000, powers[0].power >= 10 * powers[1].power else {
            throw TestRigError("channel \(channel) carries no one tone: \(powers.prefix(2).map { "\($0.speaker.rawValue) \(10 * log10(max($0.power, 1) / written)) dB" })")
        }
        return powers[0].speaker
    }

    /// A WAV file's interleaved S16 samples and channel count, read by hand (any chunks before
    /// `fmt `, any fmt size).
    static func wavSamples(_ path: String) throws -> (samples: [Int16], channels: Int) {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let format = try #require(WAVLayout.chunkBody("fmt ", in: bytes))
        let channels = Int(bytes[format + 2]) | Int(bytes[format + 3]) << 8
        let offset = try #require(WAVLayout.dataOffset(bytes))
        let samples = stride(from: offset, to: bytes.count - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
        return (samples, channels)
    }

    /// WAVE order of 5.1 (FL FR FC LFE BL BR), from a device that delivers it in another order.
    static let deviceOrder: [SpeakerPosition] = [.frontLeft, .frontCenter, .frontRight, .rearLeft, .rearRight, .lowFrequency]
    static let waveOrder: [SpeakerPosition] = [.frontLeft, .frontRight, .frontCenter, .lowFrequency, .rearLeft, .rearRight]

    @Test func opusSurroundDecodesEachSpeakerIntoItsChannel() throws {
        let rig = try ALSATestRig(input: Self.input(Self.deviceOrder, seconds: 3))
        let output = rig.path("surround.opus")
        let map = Self.deviceOrder.map(\.rawValue).joined(separator: ",")
        let result = try runHark(["record", "-D", "filecap", "-c", "6", "--channel-map", map, "-d", "2", "-o", output], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        // opusdec writes WAV in WAVE order (it undoes family 1's Vorbis order).
        let decoded = rig.path("surround.wav")
        let opusdec = try runTool("opusdec", ["--quiet", output, decoded])
        try #require(opusdec.status == 0, "opusdec: \(opusdec.standardError)")
        let (samples, channels) = try Self.wavSamples(decoded)
        #expect(channels == 6)
        let heard = try (0..<channels).map { try Self.dominantTone(samples, channels: channels, channel: $0) }
        #expect(heard == Self.waveOrder, "channel by channel: \(heard.map(\.rawValue))")
        let info = try runTool("opusinfo", [output])
        #expect(String(decoding: info.standardOutput, as: UTF8.self).contains("Channels: 6"))
    }

    /// Without --bitrate, surround gets opusenc's default for its streams (5.1: four, two of
    /// them coupled, 320 kb/s), not a mono stream's 64 kb/s spread over six channels.
    @Test func opusSurroundsDefaultBitrateIsOpusencs() throws {
        let rig = try ALSATestRig(input: Self.input(Self.deviceOrder, seconds: 3))
        let output = rig.path("surround-cbr.opus")
        let map = Self.deviceOrder.map(\.rawValue).joined(separator: ",")
        let result = try runHark(["record", "-D", "filecap", "-c", "6", "--channel-map", map, "-d", "2", "--hard-cbr", "-o", output], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        // opusinfo: "Average bitrate: … (w/o overhead: 320.0 kbit/s (hard-CBR))" or similar.
        let text = String(decoding: try runTool("opusinfo", [output]).standardOutput, as: UTF8.self)
        let line = try #require(text.split(separator: "\n").first { $0.contains("w/o overhead") }, "\(text)")
        let figure = try #require(line.components(separatedBy: "w/o overhead: ").last.flatMap { Double($0.prefix { $0.isNumber || $0 == "." }) },
                                  "\(line)")
        #expect(abs(figure - 320) < 4, "\(line)")
    }

    @Test(arguments: ["flac", "wav"])
    func flacAndWAVStoreWAVEOrderAndNameTheSpeakers(_ codec: String) throws {
        let rig = try ALSATestRig(input: Self.input(Self.deviceOrder, seconds: 2))
        let output = rig.path("surround.\(codec)")
        let map = Self.deviceOrder.map(\.rawValue).joined(separator: ",")
        let result = try runHark(["record", "-D", "filecap", "-c", "6", "--channel-map", map, "-d", "1", "-o", output], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        var wav = output
        if codec == "flac" {
            wav = rig.path("decoded.wav")
            let decoded = try runTool("flac", ["-d", "-f", "-s", "-o", wav, output])
            try #require(decoded.status == 0, "flac -d: \(decoded.standardError)")
        }
        let (samples, channels) = try Self.wavSamples(wav)
        let heard = try (0..<channels).map { try Self.dominantTone(samples, channels: channels, channel: $0) }
        #expect(heard == Self.waveOrder, "channel by channel: \(heard.map(\.rawValue))")
    }

    @Test func aSurroundLayoutOtherThanTheDefaultIsNamed() throws {
        // 5.1 with the side pair: FLAC says so in a WAVEFORMATEXTENSIBLE_CHANNEL_MASK tag, WAV in its mask.
        let layout: [SpeakerPosition] = [.frontLeft, .frontRight, .frontCenter, .lowFrequency, .sideLeft, .sideRight]
        let rig = try ALSATestRig(input: Self.input(layout, seconds: 2))
        let map = layout.map(\.rawValue).joined(separator: ",")
        #expect(try runHark(["record", "-D", "filecap", "-c", "6", "--channel-map", map, "-d", "1", "-o", rig.path("side.flac")], rig: rig).status == 0)
        #expect(try FLACTools.tags(rig.path("side.flac")).contains("WAVEFORMATEXTENSIBLE_CHANNEL_MASK=0x060F"))
        #expect(try runHark(["record", "-D", "filecap", "-c", "6", "--channel-map", map, "-d", "1", "-o", rig.path("side.wav")], rig: rig).status == 0)
        let header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: rig.path("side.wav"))).prefix(80))
        #expect(WAVLayout.uint32(header, at: 76) == 0x60F)
    }

    /// One or two channels that are not mono's or stereo's speakers are named too (a FLAC tag, a
    /// WAVE_FORMAT_EXTENSIBLE mask), as ffmpeg and the flac tool name them; FL,FR in either order
    /// stays plain stereo, swapped into left-right order.
    @Test func aMonoOrStereoLayoutOtherThanTheDefaultIsNamed() throws {
        let pair: [SpeakerPosition] = [.frontCenter, .lowFrequency]
        let rig = try ALSATestRig(input: Self.input(pair, seconds: 2))
        let named = try runHark(["record", "-D", "filecap", "-c", "2", "--channel-map", "FC,LFE", "-d", "1",
                                 "-o", rig.path("pair.flac"), "-o", rig.path("pair.wav")], rig: rig)
        #expect(named.status == 0, "\(named.standardError)")
        #expect(try FLACTools.tags(rig.path("pair.flac")).contains("WAVEFORMATEXTENSIBLE_CHANNEL_MASK=0x000C"))
        let header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: rig.path("pair.wav"))).prefix(80))
        #expect(WAVLayout.uint32(header, at: 56) & 0xFFFF == 0xFFFE && WAVLayout.uint32(header, at: 76) == 0xC)
        for file in ["pair.flac", "pair.wav"] {
            #expect(try Self.probedLayout(rig.path(file)).contains("channels (FC+LFE)"), "\(file)")
        }
        let (samples, channels) = try Self.wavSamples(rig.path("pair.wav"))
        #expect(try (0..<channels).map { try Self.dominantTone(samples, channels: channels, channel: $0) } == pair)

        let right = try runHark(["record", "-D", "filecap", "-c", "1", "--channel-map", "FR", "-d", "0.5",
                                 "-o", rig.path("right.flac"), "-o", rig.path("right.wav")], rig: rig)
        #expect(right.status == 0, "\(right.standardError)")
        #expect(try FLACTools.tags(rig.path("right.flac")).contains("WAVEFORMATEXTENSIBLE_CHANNEL_MASK=0x0002"))
        for file in ["right.flac", "right.wav"] {
            #expect(try Self.probedLayout(rig.path(file)).contains("channels (FR)"), "\(file)")
        }

        // Stereo named right to left: plain stereo, its channels swapped, no tag.
        let stereoRig = try ALSATestRig(input: Self.input([.frontRight, .frontLeft], seconds: 2))
        let swapped = try runHark(["record", "-D", "filecap", "-c", "2", "--channel-map", "FR,FL", "-d", "1",
                                   "-o", stereoRig.path("lr.flac"), "-o", stereoRig.path("lr.wav")], rig: stereoRig)
        #expect(swapped.status == 0, "\(swapped.standardError)")
        #expect(try !FLACTools.tags(stereoRig.path("lr.flac")).contains("WAVEFORMATEXTENSIBLE_CHANNEL_MASK"))
        let plain = [UInt8](try Data(contentsOf: URL(fileURLWithPath: stereoRig.path("lr.wav"))).prefix(60))
        #expect(WAVLayout.uint32(plain, at: 52) == 16 && WAVLayout.uint32(plain, at: 56) & 0xFFFF == 1, "a 16-byte WAVE_FORMAT_PCM fmt")
        let (lr, lrChannels) = try Self.wavSamples(stereoRig.path("lr.wav"))
        #expect(try (0..<lrChannels).map { try Self.dominantTone(lr, channels: lrChannels, channel: $0) } == [.frontLeft, .frontRight])

        // Opus's one and two channels mean mono and left-right stereo: a named layout that is
        // neither is refused, not silently dropped (the file was plain stereo or mono).
        for (channels, map) in [("2", "FC,LFE"), ("1", "FR")] {
            let output = rig.path("lost-\(channels).opus")
            let opus = try runHark(["record", "-D", "filecap", "-c", channels, "--channel-map", map, "-d", "0.5", "-o", output], rig: rig)
            #expect(opus.status == 64, "\(opus.standardError)")
            #expect(opus.errorLines.count == 1 && opus.standardError.contains("\(map) cannot be kept in Opus")
                    && opus.standardError.hasSuffix("record FLAC or WAV, which keep it\n"), "\(opus.standardError)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
        let swappedOpus = try runHark(["record", "-D", "filecap", "-c", "2", "--channel-map", "FR,FL", "-d", "0.5",
                                       "-o", stereoRig.path("lr.opus")], rig: stereoRig)
        #expect(swappedOpus.status == 0, "left and right in either order are Opus's stereo: \(swappedOpus.standardError)")
        for map in ["MONO", "FC"] {
            let mono = try runHark(["record", "-D", "filecap", "-c", "1", "--channel-map", map, "-d", "0.5",
                                    "-o", rig.path("mono-\(map).opus")], rig: rig)
            #expect(mono.status == 0, "\(map) is Opus's mono: \(mono.standardError)")
        }
    }

    /// The channel layout ffprobe reads from a file ("2 channels (FC+LFE)", "stereo", …).
    static func probedLayout(_ path: String) throws -> String {
        let probe = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=channel_layout", "-of", "csv=p=0", path])
        try #require(probe.status == 0, "ffprobe: \(probe.standardError)")
        return String(decoding: probe.standardOutput, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func surroundOpusWithoutALayoutIsRefusedWithWhatToDo() throws {
        let rig = try ALSATestRig(input: Self.input(Self.deviceOrder, seconds: 1))
        let output = rig.path("unknown.opus")
        let unknown = try runHark(["record", "-D", "filecap", "-c", "6", "-d", "0.5", "-o", output], rig: rig)
        #expect(unknown.status == 64, "\(unknown.standardError)")
        #expect(unknown.errorLines == ["hark: the device does not say which speaker each of its 6 channels is (ALSA has no channel map for it); name them with --channel-map, e.g. FL,FR,FC,LFE,RL,RR"])
        #expect(!FileManager.default.fileExists(atPath: output))
        let unusable = try runHark(["record", "-D", "filecap", "-c", "6", "--channel-map", "FL,FR,FC,LFE,FLC,FRC", "-d", "0.5", "-o", output], rig: rig)
        #expect(unusable.status == 64 && unusable.standardError.contains("is not one of Opus's surround layouts"), "\(unusable.standardError)")
        // The example fits the channel count.
        let quad = try runHark(["record", "-D", "filecap", "-c", "4", "-d", "0.5", "-o", output], rig: rig)
        #expect(quad.status == 64 && quad.errorLines.last?.hasSuffix("its 4 channels is (ALSA has no channel map for it); name them with --channel-map, e.g. FL,FR,RL,RR") == true,
                "\(quad.standardError)")
        let wrongCount = try runHark(["record", "-D", "filecap", "-c", "6", "--channel-map", "FL,FR", "-o", output], rig: rig)
        #expect(wrongCount.status == 64 && wrongCount.standardError.contains("names 2 channels; the recording has 6"))
    }
}
