import AudioFormat
import Foundation
import Testing
@testable import Encoding

/// WAV's header as hark lays it out: a JUNK chunk that becomes ds64, so a file past 4 GiB turns
/// RF64 by rewriting the header alone (EBU Tech 3306), checked field by field and by sox.
@Suite struct WAVHeaderTests {
    static let stereo = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<4).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }

    func uint64(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }

    func id(_ bytes: [UInt8], _ offset: Int) -> String { String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self) }

    @Test func aSmallFileIsPlainRIFFWithJunkWhereDs64WillGo() {
        var header = WAVHeader(format: Self.stereo)
        #expect(header.bytes.count == 80)  // RIFF/WAVE 12, JUNK 8 + 28, fmt 8 + 16, data 8
        header.update(dataBytes: 1_000)
        let bytes = header.bytes
        #expect(id(bytes, 0) == "RIFF" && uint32(bytes, 4) == 80 + 1_000 - 8 && id(bytes, 8) == "WAVE")
        #expect(id(bytes, 12) == "JUNK" && uint32(bytes, 16) == 28 && bytes[20..<48].allSatisfy { $0 == 0 })
        #expect(id(bytes, 48) == "fmt " && uint32(bytes, 52) == 16)
        #expect(id(bytes, 72) == "data" && uint32(bytes, 76) == 1_000)
    }

    @Test func pastFourGibibytesTheSameHeaderBecomesRF64() {
        var header = WAVHeader(format: Self.stereo)
        let data = 5 << 30
        header.update(dataBytes: data)
        let bytes = header.bytes
        #expect(id(bytes, 0) == "RF64" && uint32(bytes, 4) == 0xFFFF_FFFF)
        #expect(id(bytes, 12) == "ds64" && uint32(bytes, 16) == 28)
        #expect(uint64(bytes, 20) == UInt64(80 + data - 8), "RIFF size")
        #expect(uint64(bytes, 28) == UInt64(data), "data size")
        #expect(uint64(bytes, 36) == UInt64(data / 4), "sample count (frames)")
        #expect(uint32(bytes, 44) == 0, "no table")
        #expect(uint32(bytes, 76) == 0xFFFF_FFFF)
        // …and back, should a file be cut below the limit again (a salvage after a failed write).
        header.update(dataBytes: 4_000)
        #expect(id(header.bytes, 0) == "RIFF" && id(header.bytes, 12) == "JUNK" && header.bytes[20..<48].allSatisfy { $0 == 0 })
    }

    /// The largest plain RIFF file, and the first RF64 one, by a byte.
    @Test func theSwitchIsAtTheLastSizeA32BitFieldCanHold() {
        var header = WAVHeader(format: Self.stereo)
        let limit = Int(UInt32.max) - 1 - (80 - 8)  // RIFF size 0xFFFFFFFE
        header.update(dataBytes: limit)
        #expect(id(header.bytes, 0) == "RIFF" && uint32(header.bytes, 4) == 0xFFFF_FFFE)
        header.update(dataBytes: limit + 4)
        #expect(id(header.bytes, 0) == "RF64")
    }

    @Test func soxReadsTheRF64HeadersSizes() throws {
        guard let sox = ["/usr/bin/sox", "/usr/local/bin/sox"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            print("WAVHeaderTests: sox is not installed; the RF64 read-back is skipped")
            return
        }
        var header = WAVHeader(format: Self.stereo)
        let frames = 30_000 * 48_000  // 5.4 GiB of audio, claimed by the header only
        header.update(dataBytes: frames * 4)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hark-rf64-\(UUID().uuidString.prefix(8)).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(header.bytes + [UInt8](repeating: 0, count: 4_800)).write(to: URL(fileURLWithPath: path))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: sox)
        process.arguments = ["--i", "-s", path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(text.trimmingCharacters(in: .whitespacesAndNewlines) == "\(frames)", "sox --i -s: \(text)")
    }

    @Test func infoChunkCarriesTheTagsRIFFHasFieldsFor() {
        var tags = StreamTags()
        tags.add("TITLE", "Standup")
        tags.add("HARK_CAPTURE", "format=S16_LE")
        tags.add("ENCODER", "hark 0.1.0")
        let chunk = WAVHeader.infoChunk(tags)
        let text = String(decoding: chunk, as: UTF8.self)
        #expect(chunk.count % 2 == 0 && text.hasPrefix("LIST") && text.contains("INFOINAM"))
        #expect(text.contains("Standup\0") && text.contains("ISFT") && !text.contains("HARK_CAPTURE"))
        #expect(WAVHeader.infoChunk(StreamTags()).isEmpty)
    }
}
