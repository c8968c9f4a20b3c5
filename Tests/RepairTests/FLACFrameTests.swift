@testable import Repair
import Testing

/// The frames a repair writes in place of damaged ones: each one's header parses back as it was
/// built (numbers of every coded length), its CRCs check, and libFLAC decodes a stream of them to
/// digital silence of exactly their length.
@Suite struct FLACFrameTests {
    static func streamInfo(channels: Int, bits: Int, rate: Int = 48_000, blockSize: Int = 4_096) -> FLACStreamInfo {
        var body = [UInt8](repeating: 0, count: FLACStreamInfo.size)
        body.putBigEndian(UInt64(blockSize), bytes: 2, at: 0)
        body.putBigEndian(UInt64(blockSize), bytes: 2, at: 2)
        let packed = UInt64(rate) << 44 | UInt64(channels - 1) << 41 | UInt64(bits - 1) << 36
        body.putBigEndian(packed, bytes: 8, at: 10)
        return body.withUnsafeBytes { FLACStreamInfo($0) }
    }

    @Test(arguments: [UInt64(0), 1, 0x7F, 0x80, 0x7FF, 0x800, 0xFFFF, 0x1_0000, 0x1F_FFFF, 0x20_0000, 0x3FF_FFFF, 0x400_0000, 0x7FFF_FFFF])
    func aSilentFrameHeaderParsesBackWithItsNumber(_ number: UInt64) {
        let stream = Self.streamInfo(channels: 2, bits: 16)
        let frame = FLACFrameHeader.silentFrame(number: number, isVariableBlockSize: false, blockSize: 4_096, stream: stream)
        let header = frame.withUnsafeBytes { FLACFrameHeader.parse($0, at: 0, stream: stream) }
        #expect(header?.codedNumber == number)
        #expect(header?.blockSize == 4_096)
        #expect(Checksums.crc16(frame) == 0, "the frame's CRC-16, stored at its end, checks")
    }

    @Test(arguments: [(1, 16), (2, 16), (2, 24), (6, 24), (8, 32)])
    func libFLACDecodesSilentFramesToSilence(_ channels: Int, _ bits: Int) throws {
        let stream = Self.streamInfo(channels: channels, bits: bits)
        var file = Array("fLaC".utf8) + [0x80, 0, 0, UInt8(FLACStreamInfo.size)]  // the last (only) block
        var info = stream
        info.totalSamples = 3 * 4_096 + 100
        file += info.bytes
        for (number, size) in [(UInt64(0), 4_096), (1, 4_096), (2, 4_096), (3, 100)] {
            file += FLACFrameHeader.silentFrame(number: number, isVariableBlockSize: false, blockSize: size, stream: stream)
        }
        let decoded = try #require(FLACDecoding.decode(length: file.count, checkMD5: false) { range, destination in
            file[range].withUnsafeBytes { destination.copyMemory(from: $0) }
        })
        #expect(decoded.errors.isEmpty, "\(decoded.errors)")
        #expect(decoded.samples == info.totalSamples)
        // The MD5 of that many zero samples, as an independent MD5 of zero bytes gives it.
        var zeros = MD5()
        zeros.update([UInt8](repeating: 0, count: Int(info.totalSamples) * channels * (bits / 8)))
        #expect(decoded.md5 == zeros.digest())
    }
}

/// The walk's ambiguous ends: a frame whose stored CRC-16 is 0x0000 ends in zero bytes, which a
/// zero-filled tail (what a crash leaves) also is; and a frame followed by the first bytes of the
/// next one's header, which a recorder killed as it began a write leaves.
@Suite struct FLACFrameEndTests {
    /// A stream header (STREAMINFO only, total samples unset: a recording that never finished)
    /// and silent frames numbered 0…, the last of block size `lastBlockSize`.
    static func unfinishedStream(frames: Int, lastBlockSize: Int, stream: FLACStreamInfo) -> [UInt8] {
        var file = Array("fLaC".utf8) + [0x80, 0, 0, UInt8(FLACStreamInfo.size)] + stream.bytes
        for number in 0..<frames {
            let size = number == frames - 1 ? lastBlockSize : stream.maximumBlockSize
            file += FLACFrameHeader.silentFrame(number: UInt64(number), isVariableBlockSize: false, blockSize: size, stream: stream)
        }
        return file
    }

    /// A block size whose silent frame number 3 stores the CRC-16 0x0000 (one in 65,536 do).
    static let zeroCRCBlockSize: Int = {
        let stream = FLACFrameTests.streamInfo(channels: 2, bits: 16, blockSize: 65_535)
        return (16...65_535).first { size in
            let frame = FLACFrameHeader.silentFrame(number: 3, isVariableBlockSize: false, blockSize: size, stream: stream)
            return frame.suffix(2) == [0, 0]
        }!
    }()

    @Test(arguments: [0, 3, 4_096])
    func aLastFrameWhoseCRCIsZeroIsKeptWholeWithOrWithoutZerosAfterIt(_ zerosAfter: Int) throws {
        let stream = FLACFrameTests.streamInfo(channels: 2, bits: 16, blockSize: 65_535)
        let file = Self.unfinishedStream(frames: 4, lastBlockSize: Self.zeroCRCBlockSize, stream: stream)
            + [UInt8](repeating: 0, count: zerosAfter)
        let analysis = try file.withUnsafeBytes { (bytes) throws(RepairFailure) in try FLACRepair.analyse(bytes) }
        let expected = Double(3 * 65_535 + Self.zeroCRCBlockSize) / 48_000
        #expect(abs(analysis.seconds - expected) < 1e-9, "\(analysis.problems)")
        guard case .repairable(let plan) = analysis.verdict else { Issue.record("\(analysis.verdict)"); return }
        #expect(plan.length == file.count - zerosAfter, "the frame's own zero CRC is kept, the zeros after it cut")
        #expect(analysis.problems.contains { $0.contains("zero bytes at the end") } == (zerosAfter > 0), "\(analysis.problems)")
    }

    @Test func aFrameFollowedByTheStartOfAHeaderIsKept() throws {
        let stream = FLACFrameTests.streamInfo(channels: 2, bits: 16)
        let whole = Self.unfinishedStream(frames: 3, lastBlockSize: 4_096, stream: stream)
        let file = whole + [0xFF, 0xF8, 0x69]
        let analysis = try file.withUnsafeBytes { (bytes) throws(RepairFailure) in try FLACRepair.analyse(bytes) }
        #expect(abs(analysis.seconds - Double(3 * 4_096) / 48_000) < 1e-9, "every whole frame is kept: \(analysis.problems)")
        #expect(analysis.problems.contains("3 bytes at the end that are no whole frame, cut"), "\(analysis.problems)")
    }
}
