import AudioFormat
import Foundation
import SignalGenerator
import Testing

/// `hark repair` on what failures leave: hark recordings killed with SIGKILL at random moments
/// (paced and unpaced, FLAC, Ogg Opus and WAV), and the peers' own: `flac` into a pipe, `opusenc`
/// and `arecord` killed. Every repaired file passes the format's reference checker, and decodes to
/// exactly what could be decoded before (Opus: the same samples from opusdec; FLAC and WAV:
/// bit-exact with the input's prefix).
///
/// `HARK_REPAIR_KILLS` sets the kills per format (4 by default; `scripts/repair-soak` runs 100
/// in all). The seed is printed, and `HARK_REPAIR_SEED` replays a run.
@Suite struct RepairKillTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    static let kills = ProcessInfo.processInfo.environment["HARK_REPAIR_KILLS"].flatMap(Int.init) ?? 4

    @Test(arguments: ["flac", "opus", "wav"])
    func killedRecordingsAreRepairedToWhatWasOnDisk(_ codec: String) throws {
        let seed = ProcessInfo.processInfo.environment["HARK_REPAIR_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...999_999)
        var random = SplitMix64(seed: seed)
        print("RepairKillTests: \(codec): seed \(seed) (HARK_REPAIR_SEED replays it), \(Self.kills) kills")
        let signal = TestSignal(format: Self.format, frames: 40 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        var repaired = 0
        for run in 0..<Self.kills {
            let paced = run % 2 == 1
            let output = rig.path("killed-\(run).\(codec)")
            let recording = try startHark(["record", "-D", paced ? "pacedcap" : "filecap", "-d", "40", "-o", output], rig: rig)
            // Wait for the file to appear, then kill at a random moment: unpaced recordings run at
            // the encoder's speed (tenths of a second), paced ones in real time.
            let appeared = Date().addingTimeInterval(30)
            while !FileManager.default.fileExists(atPath: output) && Date() < appeared && recording.process.isRunning { usleep(2_000) }
            usleep(UInt32(paced ? 300_000 + random.next(below: 2_700_001) : random.next(below: 250_001)))
            recording.send(SIGKILL)
            _ = recording.wait(timeout: 10)
            guard FileManager.default.fileExists(atPath: output) else { continue }  // killed before it committed

            let before = rig.path("before-\(run).\(codec)")
            try FileManager.default.copyItem(atPath: output, toPath: before)
            // What the independent decoder makes of the killed file (FLAC: through a frame cut by
            // the kill). A WAV's is compared with the bytes on disk instead.
            var decodedBefore: [Int32] = []
            if codec == "flac" {
                decodedBefore = try FLACTools.decode(before, bitsPerSample: 16, throughErrors: true)
            } else if codec == "opus" {
                do {
                    decodedBefore = try RepairTools.decode(before, codec: codec)
                } catch {
                    // opusdec cannot open a stream killed before its header pages were whole and
                    // an audio page followed; then there was no audio, and the repair keeps none.
                    let pages = OggPage.pages(of: try Data(contentsOf: URL(fileURLWithPath: before)))
                    #expect(pages.count <= 2, "run \(run): opusdec refused a file with \(pages.count) whole pages: \(error)")
                }
            }
            let result = try RepairTools.repair(["--write", output], rig: rig)
            let line = result.errorLines.joined(separator: "\n")
            print("RepairKillTests: \(codec) run \(run) (\(paced ? "paced" : "unpaced")): \(line)")
            #expect([0, 1].contains(result.status), "run \(run): \(line)")
            if result.status == 1 { repaired += 1 }
            #expect(try RepairTools.isClean(output, codec: codec), "run \(run): the repaired file does not check clean")
            let decoded = try RepairTools.decode(output, codec: codec)
            if codec == "opus" {
                // What decoded before the repair decodes after it: opusdec plays a stream with no
                // end-of-stream page to its last whole packet, as the repair cuts it.
                expectSameElements(decoded, decodedBefore, "run \(run): \(decoded.count) samples after, \(decodedBefore.count) before")
            } else {
                expectSameElements(decoded[...], signal.prefix(frames: decoded.count / 2), "run \(run): the repaired audio is not the input's prefix")
                if codec == "flac" { #expect(decoded.count >= decodedBefore.count, "run \(run): fewer samples than decoded before") }
                if codec == "wav" {
                    // Everything that was on disk, to the last whole frame, is in the data chunk.
                    let snapshot = try RepairTools.bytes(before)
                    let dataStart = try #require(snapshot.range(of: Data("data".utf8))).upperBound + 4
                    #expect(decoded.count / 2 == (snapshot.count - dataStart) / 4, "run \(run): \(decoded.count / 2) frames kept of \((snapshot.count - dataStart) / 4) on disk")
                }
            }
            try? FileManager.default.removeItem(atPath: before)
            try? FileManager.default.removeItem(atPath: output)
        }
        print("RepairKillTests: \(codec): \(repaired) of \(Self.kills) killed files needed a repair")
        #expect(repaired > 0, "no kill left a file that needed repair")
        #expect(RepairTools.hiddenFiles(in: rig.directory.path).filter { $0.contains("repair") }.isEmpty, "a temporary file was left behind")
    }

    @Test func flacWrittenIntoAPipeGetsItsTotalsAndMD5() throws {
        let signal = TestSignal(format: Self.format, frames: 6 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let piped = rig.path("piped.flac"), cut = rig.path("cut.flac")
        // flac into a pipe cannot seek back: STREAMINFO keeps 0 samples and no MD5. Cut short too,
        // as a full disk or a killed reader leaves it.
        let encode = "cat '\(rig.inputFile.path)' | flac -s -5 --force-raw-format --endian=little --sign=signed --channels=2 --bps=16 --sample-rate=48000 -c -"
        #expect(try runTool("bash", ["-c", "\(encode) | cat > '\(piped)'; \(encode) | head -c 600000 > '\(cut)'"]).status == 0)
        #expect(try FLACTools.totalSamples(piped) == 0)
        let result = try RepairTools.repair(["--write", piped, cut], rig: rig)
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.errorLines.first?.contains("total samples unset") == true, "\(result.standardError)")
        #expect(result.errorLines.first?.contains("MD5 unset") == true, "\(result.standardError)")
        for file in [piped, cut] {
            #expect(try FLACTools.test(file).status == 0)
            let decoded = try FLACTools.decode(file, bitsPerSample: 16)
            #expect(try FLACTools.totalSamples(file) == decoded.count / 2)
            expectSameElements(decoded[...], signal.prefix(frames: decoded.count / 2))
            #expect(try FLACTools.md5(file) != String(repeating: "0", count: 32))
        }
        #expect(try FLACTools.totalSamples(piped) == 6 * 48_000)
    }

    @Test func opusencKilledIsEndedAtItsLastWholePacket() throws {
        let signal = TestSignal(format: Self.format, frames: 20 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let output = rig.path("opusenc.opus")
        // opusenc reads 8 s of input from a pipe that then stays open, and is killed while waiting,
        // with pages still in its stdio buffer: the file ends inside a page.
        let input = Pipe()
        let encoder = try RunningProcess(URL(fileURLWithPath: try #require(findOnPath("opusenc"))),
                                         ["--quiet", "--raw", "--raw-rate", "48000", "-", output],
                                         environment: rig.environment, scratch: rig.directory, standardInput: input.fileHandleForReading)
        input.fileHandleForWriting.write(signal.alsaBytes.prefix(8 * 48_000 * 4))
        let deadline = Date().addingTimeInterval(20)
        while ((try? RepairTools.bytes(output).count) ?? 0) < 24_000 && Date() < deadline { usleep(50_000) }
        encoder.send(SIGKILL)
        _ = encoder.wait(timeout: 10)
        try input.fileHandleForWriting.close()
        let decodedBefore = try OpusTools.decode(output).samples
        #expect(try !OpusTools.info(output).isClean, "opusinfo should miss the end-of-stream page")
        let result = try RepairTools.repair(["--write", output], rig: rig)
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardError.contains("no end-of-stream page"), "\(result.standardError)")
        let info = try OpusTools.info(output)
        #expect(info.isClean, "\(info.text)")
        try expectSameElements(OpusTools.decode(output).samples, decodedBefore)
    }

    @Test func arecordKilledHasItsSizesSet() throws {
        let signal = TestSignal(format: Self.format, frames: 30 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("arecord.wav")
        let recorder = try RunningProcess(URL(fileURLWithPath: try #require(findOnPath("arecord"))),
                                          ["-q", "-D", "pacedcap", "-f", "S16_LE", "-c", "2", "-r", "48000", "-t", "wav", output],
                                          environment: rig.environment, scratch: rig.directory)
        let deadline = Date().addingTimeInterval(30)
        while ((try? RepairTools.bytes(output).count) ?? 0) < 200_000 && Date() < deadline { usleep(50_000) }
        recorder.send(SIGKILL)
        _ = recorder.wait(timeout: 10)
        let onDisk = try RepairTools.bytes(output)
        let result = try RepairTools.repair(["--write", output], rig: rig)
        #expect(result.status == 1, "\(result.standardError)")
        let (frames, data) = try RepairTools.pythonWAVFrames(output)
        #expect(frames == (onDisk.count - 44) / 4, "the data chunk holds every whole frame that was on disk")
        expectSameElements(decodeRawSamples(data, bitsPerSample: 16)[...], signal.prefix(frames: frames))
        #expect(try RepairTools.isClean(output, codec: "wav"))
    }
}
