import Foundation
import Testing

/// A real recording past 4 GiB: hark turns its own WAV into RF64 (EBU Tech 3306) while it records,
/// and a SIGKILL there leaves an RF64 file that ffprobe reads, whose header covers all but the last
/// second at most, whose samples are the device's bit for bit, and that `hark repair` completes
/// where there is no room for a copy of it.
///
/// The header alone is checked in `WAVHeaderTests` and the repair of a sparse file in
/// `RepairLargeWAVTests`; this is the whole path, through ALSA, the ring and the encoder thread.
/// The device is the rig's unpaced `file` plugin at 768 kHz, 8 channels, S32_LE (24.6 MB a second of
/// audio), so 4 GiB take seconds. Input and output live on a tmpfs mounted for the test: the input
/// is sparse (patterned where it matters, holes of zeros elsewhere) and the output takes 4.4 GB of
/// memory while the test runs, never the disk.
@Suite struct RF64RecordingTests {
    static let channels = 8, sampleRate = 768_000, bytesPerFrame = 32
    static let bytesPerSecond = sampleRate * bytesPerFrame
    static let fourGibibytes = 1 << 32
    /// The recording is killed once its data passes 4 GiB by this much (several header rewrites).
    static let killPastFourGibibytes = 3 * bytesPerSecond
    /// The input runs this far past 4 GiB, well beyond what hark can have read when it is killed
    /// (the file plugin does not loop: past its end it would return stale data).
    static let inputPastFourGibibytes = 20 * bytesPerSecond

    /// Memory the test needs free: the output, the input's patterned regions, hark's ring.
    static let memoryNeeded = 6 << 30

    static var enoughMemory: Bool {
        guard let meminfo = try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8),
              let line = meminfo.split(separator: "\n").first(where: { $0.hasPrefix("MemAvailable:") }),
              let kibibytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return false }
        return kibibytes * 1024 >= memoryNeeded
    }

    @Test(.enabled(if: geteuid() == 0, "mounting a tmpfs needs root (CI runs as root)"),
          .enabled(if: enoughMemory, "needs 6 GiB of free memory for a 4.4 GB recording on a tmpfs"))
    func aRecordingKilledPastFourGibibytesIsValidRF64() throws {
        let rig = try ALSATestRig(input: Data())
        try rig.withSmallDisk(size: "5000m") { disk in
            // The rig's `filecap` reads its input.raw: made a link to the sparse input on the tmpfs.
            let input = disk + "/input.raw"
            try Self.writeSparseInput(input, bytes: Self.fourGibibytes + Self.inputPastFourGibibytes)
            try FileManager.default.removeItem(at: rig.inputFile)
            try FileManager.default.createSymbolicLink(atPath: rig.inputFile.path, withDestinationPath: input)

            let output = disk + "/long.wav"
            let recording = try startHark(["record", "-D", "filecap", "-r", "\(Self.sampleRate)", "-c", "\(Self.channels)",
                                           "-f", "S32_LE", "--no-loudness", "-q", "-o", output], rig: rig)
            let deadline = Date().addingTimeInterval(300)
            var size = 0
            while size < Self.fourGibibytes + Self.killPastFourGibibytes, Date() < deadline, recording.process.isRunning {
                usleep(10_000)
                size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
            }
            recording.send(SIGKILL)
            let killed = recording.wait(timeout: 30)
            try #require(size >= Self.fourGibibytes + Self.killPastFourGibibytes,
                         "the recording reached \(size) bytes: \(killed.standardError)")

            let fileSize = try #require(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int)
            let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: output))
            defer { try? file.close() }
            let head = [UInt8](try #require(try file.read(upToCount: 4096)))
            let layout = try #require(RF64Layout(head), "not RF64: \(Data(head.prefix(16)) as NSData)")
            let present = fileSize - layout.dataOffset
            #expect(layout.dataBytes > UInt64(Self.fourGibibytes), "RF64 with \(layout.dataBytes) bytes of data")
            #expect(layout.dataBytes <= UInt64(present) && layout.dataBytes % UInt64(Self.bytesPerFrame) == 0,
                    "the header claims \(layout.dataBytes) bytes, \(present) are there")
            // The promise, whatever the schedule: at most a second of audio beyond what the header counts.
            #expect(UInt64(present) - layout.dataBytes <= UInt64(Self.bytesPerSecond),
                    "the header was \(Double(UInt64(present) - layout.dataBytes) / Double(Self.bytesPerSecond)) s behind")
            #expect(layout.riffBytes == UInt64(layout.dataOffset - 8) + layout.dataBytes, "ds64's RIFF size")
            #expect(layout.sampleCount == layout.dataBytes / UInt64(Self.bytesPerFrame), "ds64's sample count")
            #expect(layout.factSampleCount == 0xFFFF_FFFF, "fact's count is -1 in RF64 (EBU Tech 3306): ds64 holds it")

            let frames = Int(layout.dataBytes) / Self.bytesPerFrame
            let probe = try runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,channels,sample_rate,duration_ts",
                                                "-of", "default=noprint_wrappers=1", output])
            let fields = String(decoding: probe.standardOutput, as: UTF8.self)
            #expect(fields.contains("codec_name=pcm_s32le") && fields.contains("channels=8")
                    && fields.contains("sample_rate=768000") && fields.contains("duration_ts=\(frames)"),
                    "ffprobe: \(fields) \(probe.standardError)")

            try file.seek(toOffset: UInt64(layout.dataOffset))
            try Self.expectSameBytes(file, input: input, count: Int(layout.dataBytes))

            // The tmpfs has no room for a copy of the recording: the repair is made in the file itself.
            let free = try RepairOnAFullDiskTests.freeBytes(disk)
            #expect(free < fileSize, "\(free) bytes free")
            let repaired = try RepairTools.repair(["--write", output], rig: rig)
            #expect(repaired.status == 1, "\(repaired.standardError)")
            let after = try FileHandle(forReadingFrom: URL(fileURLWithPath: output))
            defer { try? after.close() }
            let repairedHead = try #require(try after.read(upToCount: 4096))
            let repairedLayout = try #require(RF64Layout([UInt8](repairedHead)), "the repaired file is not RF64")
            let repairedSize = try #require(try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int)
            #expect(repairedLayout.dataBytes == UInt64(present - present % Self.bytesPerFrame)
                    && repairedSize == repairedLayout.dataOffset + Int(repairedLayout.dataBytes),
                    "repaired: \(repairedLayout.dataBytes) bytes of data in a file of \(repairedSize)")
            #expect(repairedLayout.sampleCount == repairedLayout.dataBytes / UInt64(Self.bytesPerFrame)
                    && repairedLayout.factSampleCount == 0xFFFF_FFFF, "repaired: ds64's and fact's counts")
            #expect(try RepairTools.repair([output], rig: rig).status == 0, "a repaired file needs nothing more")
            try WAVAndRawOutputTests.expectLibsndfileReadsWithoutComplaint(output, frames: Int(repairedLayout.sampleCount))
        }
    }

    /// A sparse input of `bytes`: a pseudo-random pattern for its first 64 MiB, every 256 MiB after
    /// that for 4 MiB, and from 64 MiB before 4 GiB to its end, zeros (holes) elsewhere; so a frame
    /// lost, doubled or misplaced anywhere shows before long, and the data around 4 GiB and where
    /// hark is killed is checked byte by byte. The pattern's period (1 MiB + 7 bytes) is no multiple
    /// of a frame.
    static func writeSparseInput(_ path: String, bytes: Int) throws {
        var generator: UInt64 = 0x9E37_79B9_7F4A_7C15
        let period = (1 << 20) + 7
        let block = Data((0..<period).map { _ -> UInt8 in
            generator = generator &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: generator >> 56)
        })
        var regions = [0..<(64 << 20)]
        regions += stride(from: 256 << 20, to: fourGibibytes - (64 << 20), by: 256 << 20).map { $0..<($0 + (4 << 20)) }
        regions.append((fourGibibytes - (64 << 20))..<bytes)
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw TestRigError("cannot create \(path)") }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(bytes))
        for region in regions {
            try handle.seek(toOffset: UInt64(region.lowerBound))
            var offset = region.lowerBound
            while offset < region.upperBound {
                let count = min(block.count, region.upperBound - offset)
                try handle.write(contentsOf: block.prefix(count))
                offset += count
            }
        }
    }

    /// Compares `count` bytes of `file` from where it stands with the start of `input`, in pieces.
    static func expectSameBytes(_ file: FileHandle, input: String, count: Int) throws {
        let source = try FileHandle(forReadingFrom: URL(fileURLWithPath: input))
        defer { try? source.close() }
        var compared = 0
        while compared < count {
            let piece = min(16 << 20, count - compared)
            let recorded = try #require(try file.read(upToCount: piece))
            let expected = try #require(try source.read(upToCount: piece))
            guard recorded == expected else {
                let first = zip(recorded, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    ?? min(recorded.count, expected.count)
                Issue.record("the recording differs from the device's input at data byte \(compared + first)")
                return
            }
            compared += piece
        }
    }
}

/// The sizes of an RF64 file's header (EBU Tech 3306): "RF64", a `ds64` chunk right after "WAVE"
/// with the 64-bit RIFF size, data size and sample count, and where the data chunk's body begins.
struct RF64Layout {
    let riffBytes: UInt64, dataBytes: UInt64, sampleCount: UInt64, dataOffset: Int
    /// The `fact` chunk's 32-bit count, if there is one.
    var factSampleCount: UInt64?

    init?(_ bytes: [UInt8]) {
        func uint32(_ at: Int) -> UInt64 { (0..<4).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
        func uint64(_ at: Int) -> UInt64 { uint32(at) | uint32(at + 4) << 32 }
        func id(_ at: Int) -> String { String(decoding: bytes[at..<(at + 4)], as: UTF8.self) }
        guard bytes.count >= 48, id(0) == "RF64", uint32(4) == 0xFFFF_FFFF, id(8) == "WAVE", id(12) == "ds64" else { return nil }
        riffBytes = uint64(20)
        dataBytes = uint64(28)
        sampleCount = uint64(36)
        var offset = 12
        while offset + 8 <= bytes.count, id(offset) != "data" {
            let size = Int(uint32(offset + 4))
            if id(offset) == "fact", size >= 4 { factSampleCount = uint32(offset + 8) }
            offset += 8 + size + size % 2
        }
        guard offset + 8 <= bytes.count, uint32(offset + 4) == 0xFFFF_FFFF else { return nil }
        dataOffset = offset + 8
    }
}
