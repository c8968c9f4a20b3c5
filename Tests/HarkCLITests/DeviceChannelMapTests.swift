import AudioFormat
import Foundation
import Testing

/// The device's own channel map (`snd_pcm_get_chmap`), with no `--channel-map`: the rig's
/// `mappedcap` is a `route` PCM configured with a `chmap`, which ALSA reports through the `file`
/// plugin as it reports a sound card driver's. Each input channel carries its speaker's tone
/// (`SurroundTests.tones`); decoded by the peers' tools, each tone must land in the channel the
/// format puts that speaker in.
@Suite struct DeviceChannelMapTests {
    typealias Surround = SurroundTests

    /// Decodes `output` to WAV with the format's own tool (opusdec, flac), or reads it as it is.
    static func decodedWAV(_ output: String, codec: String, rig: ALSATestRig) throws -> String {
        let wav = rig.path("decoded-\(codec).wav")
        switch codec {
        case "opus":
            let opusdec = try runTool("opusdec", ["--quiet", output, wav])
            try #require(opusdec.status == 0, "opusdec: \(opusdec.standardError)")
        case "flac":
            let flac = try runTool("flac", ["-d", "-f", "-s", "-o", wav, output])
            try #require(flac.status == 0, "flac -d: \(flac.standardError)")
        default:
            return output
        }
        return wav
    }

    /// Which speaker's tone each channel of `wav` carries.
    static func heard(_ wav: String) throws -> [SpeakerPosition] {
        let (samples, channels) = try Surround.wavSamples(wav)
        return try (0..<channels).map { try Surround.dominantTone(samples, channels: channels, channel: $0) }
    }

    /// Records six channels of `mappedcap` to Opus, expecting a refusal: exit 64 and no file left.
    /// Returns what hark said.
    static func opusRefusal(_ rig: ALSATestRig) throws -> [String] {
        let opus = rig.path("refused.opus")
        let refused = try runHark(["record", "-D", "mappedcap", "-c", "6", "-d", "0.5", "-o", opus], rig: rig)
        #expect(refused.status == 64, "\(refused.standardError)")
        #expect(!FileManager.default.fileExists(atPath: opus))
        return refused.errorLines
    }

    @Test(arguments: ["opus", "flac", "wav"])
    func aDevicesSurroundMapPlacesEachSpeaker(_ codec: String) throws {
        // ALSA's own 5.1 order, as HDA drivers report it: neither WAVE's nor Vorbis's.
        let deviceOrder: [SpeakerPosition] = [.frontLeft, .frontRight, .rearLeft, .rearRight, .frontCenter, .lowFrequency]
        let rig = try ALSATestRig(input: Surround.input(deviceOrder, seconds: 3),
                                  deviceChannelMap: deviceOrder.map(\.rawValue).joined(separator: ","))
        let output = rig.path("surround.\(codec)")
        let result = try runHark(["record", "-D", "mappedcap", "-c", "6", "-d", "2", "-o", output], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try Self.heard(Self.decodedWAV(output, codec: codec, rig: rig)) == Surround.waveOrder)
        if codec == "wav" {
            let header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)).prefix(80))
            #expect(WAVLayout.uint32(header, at: 76) == 0x3F, "5.1's mask, FL FR FC LFE BL BR")
        }
    }

    @Test(arguments: ["opus", "flac", "wav"])
    func aDeviceThatSaysItsStereoIsSwappedIsPutLeftFirst(_ codec: String) throws {
        let rig = try ALSATestRig(input: Surround.input([.frontRight, .frontLeft], seconds: 2), deviceChannelMap: "FR,FL")
        let output = rig.path("swapped.\(codec)")
        let result = try runHark(["record", "-D", "mappedcap", "-c", "2", "-d", "1", "-o", output], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try Self.heard(Self.decodedWAV(output, codec: codec, rig: rig)) == [.frontLeft, .frontRight])
    }

    @Test func theUsersChannelMapOverridesTheDevices() throws {
        // The device claims WAVE order; the channels really come in Vorbis order, as the user says.
        let realOrder = SurroundTests.deviceOrder
        let rig = try ALSATestRig(input: Surround.input(realOrder, seconds: 2), deviceChannelMap: "FL,FR,FC,LFE,RL,RR")
        let believed = rig.path("believed.wav"), told = rig.path("told.wav")
        let deviceWord = try runHark(["record", "-v", "-D", "mappedcap", "-c", "6", "-d", "1", "-o", believed], rig: rig)
        #expect(deviceWord.status == 0, "\(deviceWord.standardError)")
        #expect(try Self.heard(believed) == realOrder, "the device's word, taken as it is")
        #expect(deviceWord.standardError.contains("; speakers FL,FR,FC,LFE,RL,RR (the device's channel map)"), "-v says whose word: \(deviceWord.standardError)")
        let map = realOrder.map(\.rawValue).joined(separator: ",")
        let userWord = try runHark(["record", "-v", "-D", "mappedcap", "-c", "6", "--channel-map", map, "-d", "1", "-o", told], rig: rig)
        #expect(userWord.status == 0, "\(userWord.standardError)")
        #expect(try Self.heard(told) == Surround.waveOrder, "the user's word first")
        #expect(userWord.standardError.contains("; speakers \(map) (--channel-map)"), "\(userWord.standardError)")
    }

    @Test func aDeviceMapOpusCannotCarryIsRefusedNamingTheMap() throws {
        // Front centre pair instead of the rear one: WAV can name it, Opus's family 1 cannot.
        let layout: [SpeakerPosition] = [.frontLeft, .frontRight, .frontCenter, .lowFrequency, .frontLeftCenter, .frontRightCenter]
        let map = layout.map(\.rawValue).joined(separator: ",")
        let rig = try ALSATestRig(input: Surround.input(layout, seconds: 2), deviceChannelMap: map)
        #expect(try Self.opusRefusal(rig) == ["hark: the device's channel map \(map) is not one of Opus's surround layouts (RFC 7845 mapping family 1); name one with --channel-map, e.g. FL,FR,FC,LFE,RL,RR, or record FLAC or WAV"])
        let wav = rig.path("kept.wav")
        #expect(try runHark(["record", "-D", "mappedcap", "-c", "6", "-d", "1", "-o", wav], rig: rig).status == 0)
        let header = [UInt8](try Data(contentsOf: URL(fileURLWithPath: wav)).prefix(80))
        #expect(WAVLayout.uint32(header, at: 76) == 0xCF, "FL FR FC LFE FLC FRC")
        #expect(try Self.heard(wav) == layout)
    }

    @Test func aDeviceMapWithAPositionHarkCannotPlaceIsNamedInTheRefusal() throws {
        // ALSA's rear centre pair (RLC, RRC) has no WAVE speaker and no place in Vorbis order.
        let rig = try ALSATestRig(input: Surround.input(Surround.waveOrder, seconds: 1), deviceChannelMap: "FL,FR,FC,LFE,RLC,RRC")
        #expect(try Self.opusRefusal(rig) == ["hark: the device's channel map FL,FR,FC,LFE,RLC,RRC names a position hark cannot place in Opus's surround layouts; name one with --channel-map, e.g. FL,FR,FC,LFE,RL,RR, or record FLAC or WAV"])
        // FLAC keeps the device's order, as with no map at all.
        let flac = rig.path("kept.flac")
        #expect(try runHark(["record", "-D", "mappedcap", "-c", "6", "-d", "0.5", "-o", flac], rig: rig).status == 0)
        #expect(try Self.heard(Self.decodedWAV(flac, codec: "flac", rig: rig)) == Surround.waveOrder)
    }
}
