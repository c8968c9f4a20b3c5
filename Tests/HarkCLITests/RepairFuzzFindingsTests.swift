import AudioFormat
import Foundation
import Testing

/// What fuzzing `hark repair` found (2026-11-28: 69,312 mutated FLAC, Ogg Opus and WAV files, and
/// files built to reach each sum in the repair code): a header field no writer sets that made the
/// repair trap with a stack trace, or invent audio. Each file here is a real recording with one
/// field changed as the fuzzer changed it (CRCs made right again where the format has them).
@Suite struct RepairFuzzFindingsTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    /// A FLAC written by `flac -5` (which adds a seek table) from two seconds of the test signal.
    func flacFile(_ rig: ALSATestRig, _ name: String) throws -> (path: String, samples: [Int32]) {
        let path = rig.path(name)
        let made = try runTool("flac", ["-5", "-s", "-f", "--force-raw-format", "--endian=little", "--sign=signed",
                                        "--channels=2", "--bps=16", "--sample-rate=48000", "-o", path, rig.inputFile.path])
        try #require(made.status == 0, "\(made.standardError)")
        return (path, try FLACTools.decode(path, bitsPerSample: 16))
    }

    /// The offset of the first metadata block of `type` (its 4-byte header), walking the blocks.
    func metadataBlock(_ type: UInt8, in data: Data) -> Int? {
        var offset = 4
        while offset + 4 <= data.count {
            let header = data[offset]
            if header & 0x7F == type { return offset }
            if header & 0x80 != 0 { return nil }
            offset += 4 + (Int(data[offset + 1]) << 16 | Int(data[offset + 2]) << 8 | Int(data[offset + 3]))
        }
        return nil
    }

    /// A seek point whose byte offset has its top bit set (one flipped bit in an ordinary `flac`
    /// file) trapped in the seek table's check, in every mode, the dry run included.
    @Test func aSeekPointOffsetPast2To63IsAWrongSeekPointNotATrap() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 2 * 48_000).alsaBytes)
        let (flac, samples) = try flacFile(rig, "seek.flac")
        var data = try RepairTools.bytes(flac)
        let table = try #require(metadataBlock(3, in: data), "flac wrote no seek table")
        data[table + 4 + 8] |= 0x80  // the first point's offset, most significant byte
        try data.write(to: URL(fileURLWithPath: flac))
        let checked = try RepairTools.repair([flac], rig: rig)
        #expect(checked.status == 2 && checked.errorLines.count == 1, "\(checked.standardError)")
        #expect(checked.standardError.contains("seek points wrong"), "\(checked.standardError)")
        let written = try RepairTools.repair(["--write", flac], rig: rig)
        #expect(written.status == 1, "\(written.standardError)")
        try expectSameElements(FLACTools.decode(flac, bitsPerSample: 16), samples, "the audio as it was")
    }

    /// STREAMINFO's maximum block size over the frames' own (8192 over 4096: valid, a bound)
    /// placed every frame as if a whole block of the maximum came before the next: `--write`
    /// put 85 ms of silence after each, two seconds became four.
    @Test func aMaximumBlockSizeAboveTheFramesMovesNoFrame() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 2 * 48_000).alsaBytes)
        let (flac, samples) = try flacFile(rig, "maxblock.flac")
        var data = try RepairTools.bytes(flac)
        data[8 + 2] = 0x20; data[8 + 3] = 0x00  // STREAMINFO's maximum block size: 8192
        // The last 1000 bytes cut, so there is something to repair and the frames are laid out.
        try data.prefix(data.count - 1000).write(to: URL(fileURLWithPath: flac))
        let written = try RepairTools.repair(["--write", flac], rig: rig)
        #expect(written.status == 1, "\(written.standardError)")
        // The torn last frame alone is silence (STREAMINFO's total says how long it was).
        #expect(written.standardError.contains("(the last frame,"), "\(written.standardError)")
        let decoded = try FLACTools.decode(flac, bitsPerSample: 16)
        #expect(decoded.count == samples.count, "\(decoded.count / 2) frames of \(samples.count / 2)")
        expectSameElements(decoded.prefix(2 * 90_000), samples.prefix(2 * 90_000), "the frames kept, where they were")
    }

    /// Granule positions no writer sets (Int64.min; Int64.max) on an Opus file's first audio page,
    /// with damage later: sums over them overflowed and trapped. Taken for no granule now.
    @Test(arguments: [Int64.min, Int64.max, Int64.max - 1000])
    func anExtremeGranuleIsTakenForNoneNotATrap(_ granule: Int64) throws {
        let signal = TestSignal(format: Self.format, frames: 3 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let opus = rig.path("granule.opus")
        #expect(try runHark(["record", "-q", "-D", "filecap", "-d", "2", "-o", opus], rig: rig).status == 0)
        var data = try RepairTools.bytes(opus)
        let pages = OggPages.offsets(in: data)
        try #require(pages.count > 4, "\(pages.count) pages")
        OggPages.setGranule(granule, ofPageAt: pages[2], in: &data)
        data[pages[3] + 40] ^= 0x10  // damage inside the next page
        try data.write(to: URL(fileURLWithPath: opus))
        let checked = try RepairTools.repair([opus], rig: rig)
        #expect([0, 2, 65].contains(checked.status) && checked.errorLines.count == 1, "\(checked.standardError)")
        let written = try RepairTools.repair(["--write", opus], rig: rig)
        #expect([0, 1, 65].contains(written.status) && !written.standardError.contains("Fatal error"), "\(written.standardError)")
    }

    // Found by the in-process fuzzer (`RepairFuzzTests`, 2026-11-28), each file made here by the
    // reference encoder rather than hark's.

    /// A 5.1 Ogg Opus file (opusenc: mapping family 1, four elementary streams) cut inside its first
    /// audio page was ended with a one-stream silent packet, which a multistream decoder rejects
    /// ("Decoding error." from opusdec). The same packet ended a surround recording stopped before
    /// any audio (`OggOpusEndOfStreamTests`).
    @Test func aSurroundOpusFileCutBeforeItsFirstAudioPageEndsAsAStreamThatDecodes() throws {
        let rig = try ALSATestRig(input: TestSignal(format: PCMFormat(sampleFormat: .s16LE, channels: 6, sampleRate: 48_000),
                                                    frames: 48_000).alsaBytes)
        let opus = rig.path("surround.opus")
        let made = try runTool("opusenc", ["--quiet", "--raw", "--raw-chan", "6", "--raw-rate", "48000", "--raw-bits", "16",
                                           rig.inputFile.path, opus])
        try #require(made.status == 0, "\(made.standardError)")
        let pages = OggPages.offsets(in: try RepairTools.bytes(opus))
        try #require(pages.count > 3, "\(pages.count) pages")
        try RepairTools.bytes(opus).prefix(pages[2] + 200).write(to: URL(fileURLWithPath: opus))
        let written = try RepairTools.repair(["--write", opus], rig: rig)
        #expect(written.status == 1 && written.standardError.contains("no audio page"), "\(written.standardError)")
        let decoded = try runTool("opusdec", ["--quiet", "--force-wav", opus, rig.path("out.wav")])
        #expect(decoded.status == 0 && !decoded.standardError.contains("rror"), "\(decoded.standardError)")
        let info = try OpusTools.info(opus)
        #expect(info.isClean && info.text.contains("Channels: 6"), "\(info.text)")
    }

    /// The OpusTags page (or OpusHead's) repeated between two audio pages, CRC intact: its packet
    /// was kept as audio, and the repair then failed its own decoding check after the check had
    /// said "would repair". libopus cannot read a header packet as Opus, so it is dropped now, as
    /// damage that cost no audio, and the file decodes to what it held.
    @Test(arguments: [0, 1]) func aHeaderPageRepeatedAmongTheAudioIsDropped(header: Int) throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 4 * 48_000).alsaBytes)
        let opus = rig.path("repeated.opus")
        let made = try runTool("opusenc", ["--quiet", "--raw", "--raw-chan", "2", "--raw-rate", "48000", "--raw-bits", "16",
                                           rig.inputFile.path, opus])
        try #require(made.status == 0, "\(made.standardError)")
        let original = try OpusTools.decode(opus, dithered: false)
        var data = try RepairTools.bytes(opus)
        let pages = OggPages.offsets(in: data)
        try #require(pages.count > 4, "\(pages.count) pages")  // opusenc: a page a second
        data.insert(contentsOf: data[pages[header]..<pages[header + 1]], at: pages[3])
        try data.write(to: URL(fileURLWithPath: opus))
        let checked = try RepairTools.repair([opus], rig: rig)
        #expect(checked.status == 2, "\(checked.standardError)")
        let written = try RepairTools.repair(["--write", opus], rig: rig)
        #expect(written.status == 1 && written.standardError.contains("no audio lost"), "\(written.standardError)")
        #expect(try OpusTools.info(opus).isClean)
        #expect(try OpusTools.decode(opus, dithered: false).samples == original.samples, "the same audio, decoded by opusdec")
    }

    /// FLAC metadata blocks whose bodies are not what their type says, in a file whose frames are
    /// whole: a VORBIS_COMMENT whose vendor length runs past the block (`flac -t`: "BAD_METADATA";
    /// the check said "nothing to do", its decoder skipping the block), and the tags block's type
    /// byte made STREAMINFO (`flac -t`: "more than one STREAMINFO"; `--write` failed its own check).
    /// Each becomes padding of its size: the audio stays where it was, and the file passes `flac -t`.
    @Test(arguments: ["vendor length", "second STREAMINFO"]) func aDamagedMetadataBlockBecomesPadding(damage: String) throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 48_000).alsaBytes)
        let (flac, samples) = try flacFile(rig, "tags.flac")
        var data = try RepairTools.bytes(flac)
        let tags = try #require(metadataBlock(4, in: data), "flac wrote no VORBIS_COMMENT")
        if damage == "vendor length" {
            data.replaceSubrange((tags + 4)..<(tags + 8), with: [0xFF, 0xFF, 0xFF, 0x00])
        } else {
            data[tags] &= 0x80
        }
        try data.write(to: URL(fileURLWithPath: flac))
        #expect(try FLACTools.test(flac).status != 0, "the control: flac -t refuses the damaged file")
        let checked = try RepairTools.repair([flac], rig: rig)
        #expect(checked.status == 2 && checked.standardError.contains("made padding"), "\(checked.standardError)")
        let written = try RepairTools.repair(["--write", flac], rig: rig)
        #expect(written.status == 1, "\(written.standardError)")
        #expect(try FLACTools.test(flac).status == 0)
        #expect(try RepairTools.bytes(flac).count == data.count, "padding of the block's size: nothing moved")
        try expectSameElements(FLACTools.decode(flac, bitsPerSample: 16), samples, "the audio as it was")
    }

    /// Where `flac -5`'s first frame starts: after its PADDING block, the last, of 8 KiB.
    func flacAudioStart(in data: Data) throws -> Int {
        try #require(metadataBlock(1, in: data)).advanced(by: 4 + 8_192)
    }

    /// Writes `damaged` over `flac`, repairs it (exit 1), checks it again (exit 0: whole), and
    /// returns what `flac -d` decodes of it.
    func repairedAndWholeAtTheNextCheck(_ flac: String, damaged: Data, rig: ALSATestRig) throws -> [Int32] {
        try damaged.write(to: URL(fileURLWithPath: flac))
        let written = try RepairTools.repair(["--write", flac], rig: rig)
        #expect(written.status == 1, "\(written.standardError)")
        let again = try RepairTools.repair([flac], rig: rig)
        #expect(again.status == 0, "\(again.standardError)")
        return try FLACTools.decode(flac, bitsPerSample: 16)
    }

    /// STREAMINFO's block sizes disagreeing (minimum 4096, maximum 4097: one byte changed) with one
    /// intact frame left between two damaged ones: the maximum was taken for the stream's block
    /// size, so the repair put the frame a sample late and numbered the silence after it so that
    /// the next check found the frame out of place. The frame's own size is taken now.
    @Test func aRepairedFileIsWholeAtTheNextCheckWhenStreamInfosBlockSizesDisagree() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 12_000).alsaBytes)
        let (flac, samples) = try flacFile(rig, "blocksizes.flac")  // frames of 4096, 4096, 3808
        var data = try RepairTools.bytes(flac)
        data[8 + 3] = 0x01  // STREAMINFO's maximum block size 4096 → 4097
        let audioStart = try flacAudioStart(in: data)
        data[audioStart + 200] ^= 0x10  // inside the first frame
        data[data.count - 200] ^= 0x10  // inside the last
        let decoded = try repairedAndWholeAtTheNextCheck(flac, damaged: data, rig: rig)
        #expect(decoded.count == samples.count)
        expectSameElements(decoded[(2 * 4_096)..<(2 * 8_192)], samples[(2 * 4_096)..<(2 * 8_192)], "the intact frame, where it was")
    }

    /// STREAMINFO's block sizes both 65535 (agreeing, but not the frames' 4096), the first frame
    /// intact and the rest damaged: taken for a lone last frame's stream, the repair made the rest
    /// one silent last frame and numbered it frame 0 again. A frame with damage after it is not the
    /// last, so its own size counts; the repair keeps it and cuts the rest.
    @Test func aLoneFirstFrameKeepsItsOwnBlockSizeWhateverStreamInfoSays() throws {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: 12_000).alsaBytes)
        let (flac, samples) = try flacFile(rig, "first.flac")
        var data = try RepairTools.bytes(flac)
        // Minimum and maximum block size 65535, minimum frame size and the maximum's top byte all
        // ones (as the fuzzer set them): the maximum frame size then takes in the damaged rest,
        // which was taken for one damaged last frame.
        data.replaceSubrange(8..<16, with: [UInt8](repeating: 0xFF, count: 8))
        let audioStart = try flacAudioStart(in: data)
        // The second frame: its header as the first's, numbered 1.
        let second = try #require((audioStart + 1..<(data.count - 5)).first {
            data[$0] == 0xFF && data[$0 + 1] == 0xF8 && data[$0 + 2] == data[audioStart + 2]
                && data[$0 + 3] == data[audioStart + 3] && data[$0 + 4] == 0x01
        })
        for offset in stride(from: second + 100, to: data.count, by: 2_000) { data[offset] ^= 0x10 }
        let decoded = try repairedAndWholeAtTheNextCheck(flac, damaged: data, rig: rig)
        expectSameElements(decoded.prefix(2 * 4_096), samples.prefix(2 * 4_096), "the first frame, where it was")
    }
}

/// Ogg pages as they lie in a file, for changing one field and making its CRC right again.
enum OggPages {
    static func offsets(in data: Data) -> [Int] {
        var offsets: [Int] = []
        var offset = 0
        while offset + 27 <= data.count, data[offset..<(offset + 4)].elementsEqual("OggS".utf8) {
            offsets.append(offset)
            let segments = Int(data[offset + 26])
            offset += 27 + segments + data[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
        }
        return offsets
    }

    static func setGranule(_ granule: Int64, ofPageAt offset: Int, in data: inout Data) {
        for index in 0..<8 { data[offset + 6 + index] = UInt8(truncatingIfNeeded: UInt64(bitPattern: granule) >> (8 * index)) }
        let segments = Int(data[offset + 26])
        let end = offset + 27 + segments + data[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
        for index in 22..<26 { data[offset + index] = 0 }
        let crc = crc32(data[offset..<end])
        for index in 0..<4 { data[offset + 22 + index] = UInt8(truncatingIfNeeded: crc >> (8 * index)) }
    }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, not reflected, starting at 0.
    static func crc32(_ bytes: Data) -> UInt32 {
        var crc: UInt32 = 0
        for byte in bytes {
            crc ^= UInt32(byte) << 24
            for _ in 0..<8 { crc = crc & 0x8000_0000 != 0 ? (crc << 1) ^ 0x04C1_1DB7 : crc << 1 }
        }
        return crc
    }
}
