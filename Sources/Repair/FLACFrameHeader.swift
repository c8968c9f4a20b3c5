/// A FLAC frame header (RFC 9639 §9.1), read and checked, and the silent frames a repair writes in
/// place of damaged ones.
struct FLACFrameHeader: Equatable {
    /// Whether the header numbers samples (variable block size) rather than frames.
    let isVariableBlockSize: Bool
    let blockSize: Int
    /// The frame number (fixed block size) or the first sample's number (variable).
    let codedNumber: UInt64
    /// Header bytes, CRC-8 included.
    let length: Int

    /// The header at `offset` if it is one for this stream: the sync code, no reserved bit set,
    /// the stream's channel count, sample rate and sample size where it states them, a block size
    /// the stream allows, and a matching CRC-8. Nil otherwise (damage, or bytes of audio that
    /// happen to look like a sync code).
    static func parse(_ bytes: UnsafeRawBufferPointer, at offset: Int, stream: FLACStreamInfo) -> FLACFrameHeader? {
        guard offset + 6 <= bytes.count, bytes[offset] == 0xFF, bytes[offset + 1] & 0xFE == 0xF8 else { return nil }
        let isVariable = bytes[offset + 1] & 1 == 1
        let blockSizeCode = Int(bytes[offset + 2] >> 4), rateCode = Int(bytes[offset + 2] & 0xF)
        let channelCode = Int(bytes[offset + 3] >> 4), sizeCode = Int(bytes[offset + 3] >> 1 & 0x7)
        guard blockSizeCode != 0, rateCode != 15, channelCode <= 10, sizeCode != 3, bytes[offset + 3] & 1 == 0 else { return nil }
        guard (channelCode < 8 ? channelCode + 1 : 2) == stream.channels else { return nil }
        let sizes = [0, 8, 12, 0, 16, 20, 24, 32]
        guard sizeCode == 0 || sizes[sizeCode] == stream.bitsPerSample else { return nil }
        let rates = [0, 88_200, 176_400, 192_000, 8_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000, 96_000]
        if rateCode >= 1 && rateCode <= 11 && rates[rateCode] != stream.sampleRate { return nil }

        // The coded number: UTF-8's scheme stretched to 36 bits (RFC 9639 §9.1.5).
        var position = offset + 4
        let lead = bytes[position]
        let extraBytes: Int
        var number: UInt64
        switch lead {
        case 0x00...0x7F: extraBytes = 0; number = UInt64(lead)
        case 0xC0...0xDF: extraBytes = 1; number = UInt64(lead & 0x1F)
        case 0xE0...0xEF: extraBytes = 2; number = UInt64(lead & 0x0F)
        case 0xF0...0xF7: extraBytes = 3; number = UInt64(lead & 0x07)
        case 0xF8...0xFB: extraBytes = 4; number = UInt64(lead & 0x03)
        case 0xFC...0xFD: extraBytes = 5; number = UInt64(lead & 0x01)
        case 0xFE where isVariable: extraBytes = 6; number = 0
        default: return nil
        }
        position += 1
        guard position + extraBytes + 4 <= bytes.count else { return nil }
        for _ in 0..<extraBytes {
            guard bytes[position] & 0xC0 == 0x80 else { return nil }
            number = number << 6 | UInt64(bytes[position] & 0x3F)
            position += 1
        }

        let blockSize: Int
        switch blockSizeCode {
        case 1: blockSize = 192
        case 2...5: blockSize = 576 << (blockSizeCode - 2)
        case 6: blockSize = Int(bytes[position]) + 1; position += 1
        case 7: blockSize = Int(bytes.bigEndian(at: position, bytes: 2)) + 1; position += 2
        default: blockSize = 256 << (blockSizeCode - 8)
        }
        switch rateCode {
        case 12:
            guard Int(bytes[position]) * 1000 == stream.sampleRate else { return nil }
            position += 1
        case 13, 14:
            guard Int(bytes.bigEndian(at: position, bytes: 2)) * (rateCode == 14 ? 10 : 1) == stream.sampleRate else { return nil }
            position += 2
        default: break
        }
        guard position < bytes.count else { return nil }
        if stream.maximumBlockSize > 0 && blockSize > stream.maximumBlockSize { return nil }
        guard Checksums.crc8(UnsafeRawBufferPointer(rebasing: bytes[offset..<position])) == bytes[position] else { return nil }
        return FLACFrameHeader(isVariableBlockSize: isVariable, blockSize: blockSize, codedNumber: number, length: position + 1 - offset)
    }

    /// The most bytes a frame with this header can take: every subframe stored verbatim (a side
    /// channel takes one bit more per sample), plus subframe headers, padding and the CRC-16.
    func maximumFrameLength(stream: FLACStreamInfo) -> Int {
        length + stream.channels * (2 + (blockSize * (stream.bitsPerSample + 1) + 7) / 8) + 16
    }

    /// A frame of digital silence: one CONSTANT subframe of 0 per channel, block size stated in 16
    /// bits, sample rate and size taken from STREAMINFO. `number` is the frame number for a fixed
    /// block size stream, the first sample's number for a variable one.
    static func silentFrame(number: UInt64, isVariableBlockSize: Bool, blockSize: Int, stream: FLACStreamInfo) -> [UInt8] {
        var frame: [UInt8] = [0xFF, isVariableBlockSize ? 0xF9 : 0xF8, 0x70, UInt8(stream.channels - 1) << 4]
        frame += codedNumber(number)
        frame.appendBigEndian(UInt64(blockSize - 1), bytes: 2)
        frame.append(Checksums.crc8(frame))
        // Each subframe: 8 header bits (zero padding bit, type CONSTANT = 000000, no wasted bits)
        // and the constant value in bitsPerSample bits, all zero; then zero padding to a byte.
        frame += [UInt8](repeating: 0, count: (stream.channels * (8 + stream.bitsPerSample) + 7) / 8)
        frame.appendBigEndian(UInt64(Checksums.crc16(frame)), bytes: 2)
        return frame
    }

    static func codedNumber(_ value: UInt64) -> [UInt8] {
        if value < 0x80 { return [UInt8(value)] }
        let (extraBytes, lead): (Int, UInt8) = switch value {
        case ..<0x800: (1, 0xC0)
        case ..<0x1_0000: (2, 0xE0)
        case ..<0x20_0000: (3, 0xF0)
        case ..<0x400_0000: (4, 0xF8)
        case ..<0x8000_0000: (5, 0xFC)
        default: (6, 0xFE)
        }
        var bytes = [lead | UInt8(truncatingIfNeeded: value >> UInt64(6 * extraBytes))]
        for index in (0..<extraBytes).reversed() { bytes.append(0x80 | UInt8(truncatingIfNeeded: value >> UInt64(6 * index)) & 0x3F) }
        return bytes
    }
}
