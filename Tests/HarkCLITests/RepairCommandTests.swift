import AudioFormat
import Foundation
import Testing

/// `hark repair` as a user meets it: a whole file is never touched, a dry run changes nothing,
/// damage in the middle is repaired and reported, each outcome has its exit code, and a file still
/// being recorded is refused.
@Suite struct RepairCommandTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    /// The signal as FLAC (flac -5), Ogg Opus (opusenc) and WAV (sox), each encoded by its reference tool.
    static func peerFiles(_ rig: ALSATestRig, seconds: Int) throws -> [(codec: String, path: String)] {
        let raw = "--force-raw-format --endian=little --sign=signed --channels=2 --bps=16 --sample-rate=48000"
        let input = rig.inputFile.path
        let script = """
            set -e
            flac -s -5 \(raw) -o '\(rig.path("peer.flac"))' '\(input)'
            opusenc --quiet --raw --raw-rate 48000 '\(input)' '\(rig.path("peer.opus"))'
            sox -t raw -r 48000 -e signed -b 16 -c 2 '\(input)' '\(rig.path("peer.wav"))'
            """
        let made = try runTool("bash", ["-c", script])
        guard made.status == 0 else { throw TestRigError("encoding the peer files: \(made.standardError)") }
        return [("flac", rig.path("peer.flac")), ("opus", rig.path("peer.opus")), ("wav", rig.path("peer.wav"))]
    }

    @Test func wholeFilesFromHarkAndItsPeersAreLeftByteIdentical() throws {
        let signal = TestSignal(format: Self.format, frames: 3 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        var files = try Self.peerFiles(rig, seconds: 3)
        for codec in ["flac", "opus", "wav"] {
            let path = rig.path("hark.\(codec)")
            let recorded = try runHark(["record", "-D", "filecap", "-d", "3", "-o", path], rig: rig)
            try #require(recorded.status == 0, "\(recorded.standardError)")
            files.append((codec, path))
        }
        // Float WAV, whose fact chunk counts the frames: from sox (stereo and six channels),
        // ffmpeg (WAVE_FORMAT_EXTENSIBLE) and hark.
        let input = rig.inputFile.path
        let floats = """
            set -e
            sox -t raw -r 48000 -e signed -b 16 -c 2 '\(input)' -e floating-point -b 32 '\(rig.path("sox-float.wav"))'
            sox -t raw -r 48000 -e signed -b 16 -c 2 '\(input)' -e floating-point -b 32 -c 6 '\(rig.path("sox-float-6.wav"))'
            ffmpeg -v error -f s16le -ar 48000 -ac 2 -i '\(input)' -c:a pcm_f32le '\(rig.path("ffmpeg-float.wav"))'
            """
        let madeFloats = try runTool("bash", ["-c", floats])
        try #require(madeFloats.status == 0, "\(madeFloats.standardError)")
        files += ["sox-float.wav", "sox-float-6.wav", "ffmpeg-float.wav"].map { ("wav", rig.path($0)) }
        let floatSignal = TestSignal(format: PCMFormat(sampleFormat: .floatLE, channels: 2, sampleRate: 48_000), frames: 48_000)
        let floatRig = try ALSATestRig(input: floatSignal.alsaBytes)
        let harkFloat = rig.path("hark-float.wav")
        let recordedFloat = try runHark(["record", "-D", "filecap", "-f", "FLOAT_LE", "-d", "1", "-o", harkFloat], rig: floatRig)
        try #require(recordedFloat.status == 0, "\(recordedFloat.standardError)")
        files.append(("wav", harkFloat))
        for (codec, path) in files {
            let original = try RepairTools.bytes(path)
            let modified = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
            let result = try RepairTools.repair(["--write", path], rig: rig)
            #expect(result.status == 0, "\(path): \(result.standardError)")
            #expect(result.standardError.contains("nothing to do"), "\(path): \(result.standardError)")
            try expectSameElements(RepairTools.bytes(path), original, "\(codec) file \(path) was changed")
            #expect(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date == modified)
        }
    }

    @Test func aDryRunChangesNothingAndExitCodesTellOutcomesApart() throws {
        let signal = TestSignal(format: Self.format, frames: 4 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let flac = try Self.peerFiles(rig, seconds: 4)[0].path
        let damaged = rig.path("damaged.flac")
        try RepairTools.bytes(flac).prefix(300_000).write(to: URL(fileURLWithPath: damaged))
        let damagedBytes = try RepairTools.bytes(damaged)

        let dryRun = try RepairTools.repair([damaged], rig: rig)
        #expect(dryRun.status == 2, "\(dryRun.standardError)")
        #expect(dryRun.errorLines.count == 1)
        #expect(dryRun.standardError.contains("would repair (FLAC)") && dryRun.standardError.contains("--write"), "\(dryRun.standardError)")
        try expectSameElements(RepairTools.bytes(damaged), damagedBytes, "a dry run changed the file")
        #expect(RepairTools.hiddenFiles(in: rig.directory.path).filter { $0.contains("repair") }.isEmpty)

        #expect(try RepairTools.repair(["--keep", damaged], rig: rig).status == 64, "--keep without --write is a usage error")
        let written = try RepairTools.repair(["--write", "--keep", damaged], rig: rig)
        #expect(written.status == 1, "\(written.standardError)")
        #expect(written.standardError.contains("the original is \(damaged).orig"), "\(written.standardError)")
        try expectSameElements(RepairTools.bytes(damaged + ".orig"), damagedBytes, "--keep kept the original as it was")
        #expect(try FLACTools.test(damaged).status == 0)
        #expect(try RepairTools.repair([damaged], rig: rig).status == 0, "a repaired file needs nothing more")

        let text = rig.path("notes.txt")
        try Data("not audio\n".utf8).write(to: URL(fileURLWithPath: text))
        let notAudio = try RepairTools.repair([text], rig: rig)
        #expect(notAudio.status == 65)
        #expect(notAudio.errorLines == ["hark: \(text): cannot repair: not a FLAC, Ogg Opus or WAV file"])
        #expect(try RepairTools.repair([rig.path("missing.flac")], rig: rig).status == 66)
        // A FIFO (what an -o FIFO recording leaves in the log) is refused at once: opening it
        // waited for a writer, with --write for ever (its stop signals blocked).
        let fifo = rig.path("live.fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        for write in [[], ["--write"]] {
            let refused = try runHark(["repair"] + write + [fifo], rig: rig, timeout: 20)
            #expect(refused.status == 66 && refused.errorLines == ["hark: \(fifo): not repaired: not a regular file"],
                    "\(write): \(refused.status) \(refused.standardError)")
        }
        // Several files: a line each, and the most serious outcome's code.
        let mixed = try RepairTools.repair([flac, damaged + ".orig", text], rig: rig)
        #expect(mixed.errorLines.count == 3)
        #expect(mixed.status == 65)
        #expect(try RepairTools.repair([flac, damaged + ".orig"], rig: rig).status == 2)
    }

    /// In the middle, and in the last frame of a finished stream: that one was cut as a torn tail,
    /// and STREAMINFO's count and MD5 set to the shorter audio, hiding that anything was lost.
    @Test(arguments: ["in the middle", "in the last frame"])
    func aFlippedBitInAFLACFrameBecomesSilenceOfTheSameLength(where place: String) throws {
        let signal = TestSignal(format: Self.format, frames: 6 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let flac = try Self.peerFiles(rig, seconds: 6)[0].path
        let size = try RepairTools.bytes(flac).count
        try RepairTools.flipBit(flac, at: place == "in the middle" ? size / 2 : size - 1_000)
        #expect(try FLACTools.test(flac).status != 0, "flac -t sees the damage")
        let result = try RepairTools.repair(["--write", flac], rig: rig)
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardError.contains("ms lost at") && result.standardError.contains("made silence"), "\(result.standardError)")
        #expect(try FLACTools.test(flac).status == 0)
        let decoded = try FLACTools.decode(flac, bitsPerSample: 16)
        #expect(decoded.count == signal.samples.count, "the timeline holds")
        let differing = decoded.indices.filter { decoded[$0] != signal.samples[$0] }
        let first = try #require(differing.first), last = try #require(differing.last)
        #expect(last - first < 2 * 4_608 * 2, "one frame or two differ, not more")
        #expect(decoded[first...last].allSatisfy { $0 == 0 }, "what differs is silence")
    }

    /// A bit flipped in the middle of opusenc's file: the page's packets are gone, and silence of
    /// their length takes their place (their length from the pages' granules), so the stream keeps
    /// its length and the audio after it its time; the audio before it decodes as it did.
    @Test func aFlippedBitInAnOggPageMakesThatPageSilenceAndSaysWhere() throws {
        let signal = TestSignal(format: Self.format, frames: 8 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let opus = try Self.peerFiles(rig, seconds: 8)[1].path
        let decodedBefore = try OpusTools.decode(opus, dithered: false).samples
        let original = try RepairTools.bytes(opus)
        let size = original.count
        let pages = OggPage.pages(of: original)
        let packets = OggPage.packets(of: pages)
        let touched = try Self.packetsTouched(atByte: size / 2, of: pages)
        try RepairTools.flipBit(opus, at: size / 2)
        let result = try RepairTools.repair(["--write", opus], rig: rig)
        #expect(result.status == 1, "\(result.standardError)")
        let lostMilliseconds = touched.count * 20
        #expect(result.standardError.contains("\(lostMilliseconds) ms lost at ") && result.standardError.contains(" damaged bytes), made silence"),
                "\(result.standardError)")
        let info = try OpusTools.info(opus)
        #expect(info.isClean, "\(info.text)")
        let decodedAfter = try OpusTools.decode(opus, dithered: false).samples
        // As long as before, end trimming included (until 2026-11-28 the packets were dropped, the
        // stream was shorter by them, and the encoder's padding at its end was decoded).
        try #require(decodedAfter.count == decodedBefore.count, "\(decodedAfter.count) samples after, \(decodedBefore.count) before")
        // Where the lost packets began, in decoded samples (the pre-skip is not decoded).
        let preSkip = Int(pages[0].body[10]) | Int(pages[0].body[11]) << 8
        let firstLost = touched.first!, lastLost = touched.last!
        let lostFrom = (Int(pages[packets[firstLost - 1].page].granulePosition) - preSkip) * 2
        let lostTo = lostFrom + touched.count * 960 * 2
        #expect(decodedAfter[..<lostFrom] == decodedBefore[..<lostFrom], "the audio before the damage decodes as before")
        // Silence, once the first silent packet has faded out the audio before it (20 ms).
        let silence = decodedAfter[(lostFrom + 1_920)..<lostTo]
        #expect(silence.allSatisfy { $0 == 0 }, "largest sample in the silence: \(silence.map { abs(Int($0)) }.max() ?? 0)")
        // The audio after it is where it was: once the decoder has settled (100 ms), it follows the
        // original decode closely (the decoder's state differs after the silence, not the audio).
        let settled = (lostTo + 9_600)..<min(decodedAfter.count, lostTo + 9_600 + 96_000)
        let error = settled.reduce(0.0) { $0 + pow(Double(decodedAfter[$1]) - Double(decodedBefore[$1]), 2) }
        let power = settled.reduce(0.0) { $0 + pow(Double(decodedBefore[$1]), 2) }
        print("RepairCommandTests: packets \(firstLost)–\(lastLost) lost; after them, error \(10 * log10(error / power)) dB below the signal")
        #expect(error < power / 100, "the audio after the damage is not where it was: error \(10 * log10(error / power)) dB")
    }

    /// The packets (indices into `OggPage.packets(of: pages)`) that the page holding byte `offset`
    /// holds any part of: those ending on it, and one it starts that ends on a later page.
    static func packetsTouched(atByte offset: Int, of pages: [OggPage]) throws -> [Int] {
        var pageEnd = 0
        let damagedPage = try #require(pages.indices.first { index in
            pageEnd += pages[index].byteCount
            return offset < pageEnd
        })
        let packets = OggPage.packets(of: pages)
        return packets.indices.filter { index in
            packets[index].page == damagedPage
                || (index > 0 && packets[index - 1].page == damagedPage && packets[index].page > damagedPage && pages[damagedPage + 1].isContinuation)
        }
    }

    /// Damage in the first audio page: nothing before it says where the audio began, so its
    /// packets are only dropped (said so), and exactly they are missing from the decode; the end
    /// trimming of the intact last page stays (it is read from the last two pages' granules).
    @Test func aFlippedBitInTheFirstAudioPageDropsItsPackets() throws {
        let signal = TestSignal(format: Self.format, frames: 4 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let opus = try Self.peerFiles(rig, seconds: 4)[1].path
        let before = try OpusTools.decode(opus).samples.count
        let original = try RepairTools.bytes(opus)
        let pages = OggPage.pages(of: original)
        // The first audio page (after OpusHead and OpusTags), somewhere in its body.
        let firstAudioPage = pages[0].byteCount + pages[1].byteCount
        let damaged = firstAudioPage + pages[2].byteCount - pages[2].body.count / 2
        let touched = try Self.packetsTouched(atByte: damaged, of: pages)
        try RepairTools.flipBit(opus, at: damaged)
        let result = try RepairTools.repair(["--write", opus], rig: rig)
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardError.contains("damaged bytes at 0.000 s, the packets there dropped"), "\(result.standardError)")
        #expect(try OpusTools.info(opus).isClean)
        let after = try OpusTools.decode(opus).samples.count
        #expect(before - after == touched.count * 960 * 2, "\(touched.count) packets on the damaged page; \(after) of \(before) samples left")
    }

    @Test func aFileStillBeingRecordedIsRefused() throws {
        let signal = TestSignal(format: Self.format, frames: 30 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("live.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "30", "-o", output], rig: rig)
        defer { recording.send(SIGKILL); _ = recording.wait(timeout: 10) }
        let deadline = Date().addingTimeInterval(30)
        // Past the header (STREAMINFO, tags, a seek table for 30 s): audio is being written.
        while ((try? RepairTools.bytes(output).count) ?? 0) < 8_192 && Date() < deadline { usleep(20_000) }
        let result = try RepairTools.repair(["--write", output], rig: rig)
        #expect(result.status == 75, "\(result.standardError)")
        #expect(result.standardError.contains("being recorded"), "\(result.standardError)")
        recording.send(SIGINT)
        #expect(recording.wait(timeout: 20).status == 0)
        let finished = try RepairTools.repair([output], rig: rig)
        #expect(finished.status == 0, "once finished, it is whole: \(finished.standardError)")
    }
}

/// WAV past 4 GiB: a file whose sizes were never set is made RF64, in place of its JUNK chunk or
/// with a ds64 chunk inserted. The files are sparse (a hole of 4 GiB) and stay so: the repair
/// copies data regions only.
@Suite struct RepairLargeWAVTests {
    /// A 16-bit stereo 48 kHz WAV header with zero sizes, optionally with hark's JUNK chunk.
    static func header(withJunk: Bool) -> Data {
        var bytes = Data("RIFF".utf8) + Data([0, 0, 0, 0]) + Data("WAVE".utf8)
        if withJunk { bytes += Data("JUNK".utf8) + Data([28, 0, 0, 0]) + Data(count: 28) }
        bytes += Data("fmt ".utf8) + Data([16, 0, 0, 0, 1, 0, 2, 0, 0x80, 0xBB, 0, 0, 0, 0xEE, 2, 0, 4, 0, 16, 0])
        bytes += Data("data".utf8) + Data([0, 0, 0, 0])
        return bytes
    }

    @Test(arguments: [true, false])
    func aWAVPastFourGibibytesBecomesRF64(_ withJunk: Bool) throws {
        let rig = try ALSATestRig(input: Data())
        let path = rig.path("big.wav")
        let header = Self.header(withJunk: withJunk)
        let audioBytes = (1 << 32) + 4_000
        let tail = Data((0..<4_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try header.write(to: URL(fileURLWithPath: path))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(header.count + audioBytes))
        try handle.seek(toOffset: UInt64(header.count + audioBytes - tail.count))
        try handle.write(contentsOf: tail)
        try handle.close()

        let result = try RepairTools.repair(["--write", path], rig: rig)
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardError.contains("made RF64"), "\(result.standardError)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        let headerSize = header.count + (withJunk ? 0 : 36)
        #expect(size == headerSize + audioBytes)
        var info = stat()
        #expect(stat(path, &info) == 0 && Int(info.st_blocks) * 512 < 1 << 20, "the hole stayed a hole")
        let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        let start = try #require(try file.read(upToCount: headerSize))
        #expect(start.prefix(4) == Data("RF64".utf8) && start[12..<16] == Data("ds64".utf8))
        let littleEndian = { (offset: Int) in (0..<8).reduce(UInt64(0)) { $0 | UInt64(start[offset + $1]) << (8 * UInt64($1)) } }
        #expect(littleEndian(28) == UInt64(audioBytes), "ds64's data size")
        #expect(littleEndian(36) == UInt64(audioBytes / 4), "ds64's sample count")
        try file.seek(toOffset: UInt64(size - tail.count))
        #expect(try file.read(upToCount: tail.count) == tail, "the audio at the end is where it was, relative to the data chunk")
        try file.close()
        // (sox reads RF64, but walks all 4 GiB to do it: 30–40 s here. The fields are checked above.)
        #expect(try RepairTools.repair([path], rig: rig).status == 0)
    }
}
