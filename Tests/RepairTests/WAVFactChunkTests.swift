import AudioFormat
import Encoding
import Foundation
@testable import Repair
import Testing

/// The `fact` chunk of a WAVE_FORMAT_EXTENSIBLE file (the RIFF specification asks it of every
/// format but WAVE_FORMAT_PCM): hark's header keeps its frame count with the other sizes, and
/// repair sets it with them, to -1 in RF64 (EBU Tech 3306), and leaves a compressed format's
/// count alone.
@Suite struct WAVFactChunkTests {
    static let float = PCMFormat(sampleFormat: .floatLE, channels: 2, sampleRate: 48_000)

    /// The offset of chunk `id`'s body in a RIFF file's top level.
    static func chunkBody(_ id: String, in bytes: [UInt8]) -> Int? {
        var position = 12
        while position + 8 <= bytes.count {
            let size = Int(uint32(bytes, position + 4))
            if bytes[position..<(position + 4)].elementsEqual(Array(id.utf8)) { return position + 8 }
            if bytes[position..<(position + 4)].elementsEqual(Array("data".utf8)) { return nil }
            position += 8 + size + size % 2
        }
        return nil
    }

    static func uint32(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        (0..<4).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }

    /// The file `plan` describes, built from `original`.
    static func apply(_ plan: RepairPlan, to original: [UInt8]) -> [UInt8] {
        plan.segments.flatMap { segment -> [UInt8] in
            switch segment {
            case .bytes(let bytes): bytes
            case .original(let range): Array(original[range])
            }
        }
    }

    static func analyse(_ bytes: [UInt8]) throws -> RepairAnalysis {
        try bytes.withUnsafeBytes { buffer throws(RepairFailure) in try WAVRepair.analyse(buffer) }
    }

    @Test func extensibleHeadersCarryAFactChunkThatCountsFrames() throws {
        var header = WAVHeader(format: Self.float)
        let fact = try #require(Self.chunkBody("fact", in: header.bytes))
        #expect(Self.uint32(header.bytes, fact - 4) == 4)
        #expect(Self.uint32(header.bytes, fact) == 0xFFFF_FFFF, "unknown until the first update, like the other sizes")
        #expect(fact > Self.chunkBody("fmt ", in: header.bytes)!, "after fmt")
        header.update(dataBytes: 8 * 1_000)
        #expect(Self.uint32(header.bytes, fact) == 1_000)
        header.update(dataBytes: 5 << 30)
        #expect(Self.uint32(header.bytes, fact) == 0xFFFF_FFFF, "RF64: the ds64 holds the count")
        header.update(dataBytes: 8 * 7)
        #expect(Self.uint32(header.bytes, fact) == 7)
        // Every EXTENSIBLE header has one; WAVE_FORMAT_PCM (16-bit mono and stereo) none.
        for (sampleFormat, channels) in [(SampleFormat.s16LE, 6), (.s24LE, 2), (.s32LE, 1)] {
            var integer = WAVHeader(format: PCMFormat(sampleFormat: sampleFormat, channels: channels, sampleRate: 48_000))
            integer.update(dataBytes: integer.blockAlign * 500)
            let count = try #require(Self.chunkBody("fact", in: integer.bytes), "\(sampleFormat), \(channels) ch")
            #expect(Self.uint32(integer.bytes, count) == 500)
        }
        for channels in [1, 2] {
            let plain = WAVHeader(format: PCMFormat(sampleFormat: .s16LE, channels: channels, sampleRate: 48_000))
            #expect(Self.chunkBody("fact", in: plain.bytes) == nil, "WAVE_FORMAT_PCM, \(channels) ch")
        }
    }

    /// What a recorder killed between two updates leaves: sizes and count from an earlier moment.
    static func killedFloatRecording(frames: Int, countedFrames: Int) -> [UInt8] {
        var header = WAVHeader(format: Self.float)
        header.update(dataBytes: countedFrames * 8)
        return header.bytes + (0..<(frames * 8)).map { UInt8(truncatingIfNeeded: $0 &* 13) }
    }

    @Test func repairSetsTheCountWithTheSizes() throws {
        let killed = Self.killedFloatRecording(frames: 3_000, countedFrames: 1_000)
        let analysis = try Self.analyse(killed)
        guard case .repairable(let plan) = analysis.verdict else { Issue.record("not repairable: \(analysis.verdict)"); return }
        let repaired = Self.apply(plan, to: killed)
        #expect(Self.uint32(repaired, try #require(Self.chunkBody("fact", in: repaired))) == 3_000)
        #expect(try Self.analyse(repaired).problems.isEmpty)
        #expect(repaired.count == killed.count, "in place: the same length")
    }

    @Test func aWrongCountAloneIsFoundAndSet() throws {
        var header = WAVHeader(format: Self.float)
        header.update(dataBytes: 2_000 * 8)
        var bytes = header.bytes + [UInt8](repeating: 0, count: 2_000 * 8)
        let fact = try #require(Self.chunkBody("fact", in: bytes))
        #expect(try Self.analyse(bytes).problems.isEmpty, "a whole file is sound")
        bytes[fact] = 0x10  // 2000 = 0x7D0 → 0x710
        let analysis = try Self.analyse(bytes)
        #expect(analysis.problems == ["fact chunk says 1808 samples, the file holds 2000"])
        guard case .repairable(let plan) = analysis.verdict else { Issue.record("not repairable"); return }
        #expect(Self.uint32(Self.apply(plan, to: bytes), fact) == 2_000)
    }

    @Test func aCompressedFormatsCountIsLeftAlone() throws {
        // IMA ADPCM (0x11): 1017 samples in each 512-byte block of mono; the count is not bytes
        // over block align, and a stale data size must not touch it.
        var bytes = Array("RIFF".utf8) + le32(0) + Array("WAVEfmt ".utf8) + le32(20)
        bytes += le16(0x11) + le16(1) + le32(22_050) + le32(11_100) + le16(512) + le16(4) + le16(2) + le16(1017)
        bytes += Array("fact".utf8) + le32(4) + le32(3 * 1017)
        bytes += Array("data".utf8) + le32(512) + [UInt8](repeating: 0x11, count: 3 * 512)
        let analysis = try Self.analyse(bytes)
        guard case .repairable(let plan) = analysis.verdict else { Issue.record("not repairable"); return }
        let repaired = Self.apply(plan, to: bytes)
        #expect(Self.uint32(repaired, try #require(Self.chunkBody("fact", in: repaired))) == 3 * 1017)
        #expect(Self.uint32(repaired, repaired.count - 3 * 512 - 4) == 3 * 512, "the data size is set")
    }

    @Test func aFileMadeRF64HasMinusOneInItsCount() throws {
        // An RF64 header whose ds64 claims 5 GiB over a small file (a stale ds64): the repair
        // keeps it RF64 and sets the ds64, and fact's count stays -1, as EBU Tech 3306 has it.
        var header = WAVHeader(format: Self.float)
        header.update(dataBytes: 5 << 30)
        let bytes = header.bytes + [UInt8](repeating: 0, count: 4_000 * 8)
        let analysis = try Self.analyse(bytes)
        guard case .repairable(let plan) = analysis.verdict else { Issue.record("not repairable: \(analysis.problems)"); return }
        let repaired = Self.apply(plan, to: bytes)
        let fact = try #require(Self.chunkBody("fact", in: repaired))
        #expect(Self.uint32(repaired, fact) == 0xFFFF_FFFF)
        #expect(repaired[0..<4].elementsEqual(Array("RF64".utf8)))
        #expect(try Self.analyse(repaired).problems.isEmpty, "stays sound: RF64's count is the ds64's")
    }

    /// A float WAV as sox writes it (no JUNK, `fact` after `fmt `), past 4 GiB as plain RIFF: the
    /// ds64 inserted before `fmt ` moves the count's field, which is found and set to -1 there.
    @Test func aCountMovedByAnInsertedDs64IsSetWhereItLands() throws {
        var header = Array("RIFF".utf8) + le32(0xFFFF_FFFF) + Array("WAVEfmt ".utf8) + le32(18)
        header += le16(3) + le16(2) + le32(48_000) + le32(384_000) + le16(8) + le16(32) + le16(0)
        header += Array("fact".utf8) + le32(4) + le32(1_000)
        header += Array("data".utf8) + le32(8_000)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hark-fact-\(UUID().uuidString.prefix(8)).wav").path
        defer { unlink(path) }
        try Data(header).write(to: URL(fileURLWithPath: path))
        let audioBytes = (5 << 29) / 8 * 8  // 2.5 GiB + 2.5 GiB: past 4 GiB, sparse
        #expect(truncate(path, off_t(header.count + 2 * audioBytes)) == 0)
        let file = try MappedFile(path: path)
        let analysis = try file.withBytes { bytes throws(RepairFailure) in try WAVRepair.analyse(bytes) }
        guard case .repairable(let plan) = analysis.verdict, case .bytes(let newHeader)? = plan.segments.first else {
            Issue.record("not repairable: \(analysis.problems)"); return
        }
        #expect(newHeader.count == header.count + 36, "a ds64 chunk inserted")
        #expect(newHeader[12..<16].elementsEqual(Array("ds64".utf8)))
        let fact = try #require(Self.chunkBody("fact", in: newHeader))
        #expect(fact == 12 + 36 + 8 + 18 + 8)
        #expect(Self.uint32(newHeader, fact) == 0xFFFF_FFFF)
        #expect(Self.uint32(newHeader, newHeader.count - 4) == 0xFFFF_FFFF, "the data size is in the ds64")
    }
}

private func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
private func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
