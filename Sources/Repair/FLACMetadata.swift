/// A FLAC stream's header as it sits in a file: an optional ID3v2 tag some taggers put first,
/// "fLaC", then the metadata blocks (RFC 9639 §8), STREAMINFO first.
struct FLACMetadata {
    /// One metadata block: where its 4-byte header starts, its type and body length.
    struct Block {
        let offset: Int
        let type: UInt8
        let length: Int
        var bodyOffset: Int { offset + 4 }
    }

    static let streamInfoType: UInt8 = 0
    static let paddingType: UInt8 = 1
    static let applicationType: UInt8 = 2
    static let seekTableType: UInt8 = 3
    static let vorbisCommentType: UInt8 = 4
    static let pictureType: UInt8 = 6

    let blocks: [Block]
    /// Where the first frame starts: just after the last metadata block.
    let audioStart: Int
    let streamInfo: FLACStreamInfo
    /// The blocks whose bodies are not what their type says (`isWellFormed`), in file order.
    let damagedBlocks: [Block]

    var streamInfoBlock: Block { blocks[0] }
    var seekTableBlock: Block? { blocks.first { $0.type == Self.seekTableType } }

    /// Whether `bytes` start with an ID3v2 tag and a FLAC stream follows it (an MP3 starts with
    /// one too).
    static func id3v2TagPrecedesFLAC(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.matches("ID3", at: 0) && bytes.matches("fLaC", at: streamOffset(bytes))
    }

    /// Where "fLaC" should be: after an ID3v2 tag (a 10-byte header whose size is four 7-bit
    /// bytes, plus a footer when flagged), else at the start.
    private static func streamOffset(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard bytes.matches("ID3", at: 0), bytes.count >= 10 else { return 0 }
        let size = (0..<4).reduce(0) { $0 << 7 | Int(bytes[6 + $1] & 0x7F) }
        return 10 + size + (bytes[5] & 0x10 != 0 ? 10 : 0)
    }

    /// Reads the header of `bytes`; throws when there is no FLAC stream or its header is cut.
    init(_ bytes: UnsafeRawBufferPointer) throws(RepairFailure) {
        var offset = Self.streamOffset(bytes)
        guard bytes.matches("fLaC", at: offset) else {
            throw RepairFailure(.cannotRepair, "not a FLAC stream")
        }
        offset += 4
        var blocks: [Block] = []
        while true {
            guard offset + 4 <= bytes.count else {
                throw RepairFailure(.cannotRepair, "the FLAC header is cut short: no audio to recover")
            }
            let flags = bytes[offset]
            let block = Block(offset: offset, type: flags & 0x7F, length: Int(bytes.bigEndian(at: offset + 1, bytes: 3)))
            guard block.type != 127 else { throw RepairFailure(.cannotRepair, "the FLAC header is damaged (metadata block type 127)") }
            guard block.bodyOffset + block.length <= bytes.count else {
                throw RepairFailure(.cannotRepair, "the FLAC header is cut short: no audio to recover")
            }
            blocks.append(block)
            offset = block.bodyOffset + block.length
            if flags & 0x80 != 0 { break }
        }
        guard blocks[0].type == Self.streamInfoType, blocks[0].length == FLACStreamInfo.size else {
            throw RepairFailure(.cannotRepair, "the FLAC header is damaged (no STREAMINFO first)")
        }
        let streamInfo = FLACStreamInfo(UnsafeRawBufferPointer(rebasing: bytes[blocks[0].bodyOffset..<(blocks[0].bodyOffset + FLACStreamInfo.size)]))
        guard streamInfo.channels >= 1, (4...32).contains(streamInfo.bitsPerSample), streamInfo.sampleRate > 0 else {
            throw RepairFailure(.cannotRepair, "the FLAC header is damaged (STREAMINFO describes no audio)")
        }
        self.blocks = blocks
        self.streamInfo = streamInfo
        audioStart = offset
        damagedBlocks = blocks.enumerated().filter { !Self.isWellFormed($0.element, index: $0.offset, in: bytes) }.map(\.element)
    }

    /// Whether a block's body holds what its type says (RFC 9639 §8): STREAMINFO only first, an
    /// APPLICATION block's 4-byte ID, every length inside a VORBIS_COMMENT or PICTURE within the
    /// block. A reader that parses such a block (libFLAC for `flac -t`, ffmpeg, a tag editor)
    /// stops on it, or takes a second STREAMINFO's bytes for the stream's format and MD5, while a
    /// decoder that skips it decodes the file cleanly. Other types are taken as they are.
    private static func isWellFormed(_ block: Block, index: Int, in bytes: UnsafeRawBufferPointer) -> Bool {
        let body = UnsafeRawBufferPointer(rebasing: bytes[block.bodyOffset..<(block.bodyOffset + block.length)])
        switch block.type {
        case streamInfoType: return index == 0
        case applicationType: return body.count >= 4
        case vorbisCommentType:
            var reader = LengthPrefixedReader(body: body)
            guard reader.skipLittleEndianString(), let count = reader.littleEndian32() else { return false }
            return (0..<count).allSatisfy { _ in reader.skipLittleEndianString() }
        case pictureType:
            var reader = LengthPrefixedReader(body: body)
            return reader.skip(4) && reader.skipBigEndianString() && reader.skipBigEndianString() && reader.skip(16)
                && reader.skipBigEndianString()
        default: return true
        }
    }

    /// The bytes that replace a damaged block: a PADDING block of the same length (the last-block
    /// flag kept), so nothing after it moves, as `metaflac` leaves padding where it removes a block.
    static func padding(replacing block: Block, in bytes: UnsafeRawBufferPointer) -> [UInt8] {
        let length = UInt64(block.length)
        return [bytes[block.offset] & 0x80 | paddingType, UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + [UInt8](repeating: 0, count: block.length)
    }

    /// Reads a block body's fields in order, each length checked against what is left.
    private struct LengthPrefixedReader {
        let body: UnsafeRawBufferPointer
        var position = 0

        mutating func skip(_ count: Int) -> Bool {
            guard count >= 0, count <= body.count - position else { return false }
            position += count
            return true
        }

        mutating func littleEndian32() -> Int? {
            guard body.count - position >= 4 else { return nil }
            defer { position += 4 }
            return Int(body.littleEndian(at: position, bytes: 4))
        }

        /// A 32-bit little-endian length and that many bytes (a Vorbis comment's strings).
        mutating func skipLittleEndianString() -> Bool { littleEndian32().map { skip($0) } ?? false }

        /// A 32-bit big-endian length and that many bytes (a PICTURE's MIME type, description, data).
        mutating func skipBigEndianString() -> Bool {
            guard body.count - position >= 4 else { return false }
            let length = Int(body.bigEndian(at: position, bytes: 4))
            position += 4
            return skip(length)
        }
    }
}

/// STREAMINFO's fields (RFC 9639 §8.2): 34 bytes, big-endian bit fields.
struct FLACStreamInfo: Equatable {
    static let size = 34

    var minimumBlockSize: Int
    var maximumBlockSize: Int
    /// 0 means unknown.
    var minimumFrameSize: Int
    var maximumFrameSize: Int
    var sampleRate: Int
    var channels: Int
    var bitsPerSample: Int
    /// Samples per channel; 0 means unknown (a stream written to a pipe, or never finished).
    var totalSamples: UInt64
    /// All zero means unknown.
    var md5: [UInt8]

    var isMD5Set: Bool { md5.contains { $0 != 0 } }

    init(_ body: UnsafeRawBufferPointer) {
        minimumBlockSize = Int(body.bigEndian(at: 0, bytes: 2))
        maximumBlockSize = Int(body.bigEndian(at: 2, bytes: 2))
        minimumFrameSize = Int(body.bigEndian(at: 4, bytes: 3))
        maximumFrameSize = Int(body.bigEndian(at: 7, bytes: 3))
        let packed = body.bigEndian(at: 10, bytes: 8)  // rate 20, channels-1 3, bits-1 5, total 36
        sampleRate = Int(packed >> 44)
        channels = Int(packed >> 41 & 0x7) + 1
        bitsPerSample = Int(packed >> 36 & 0x1F) + 1
        totalSamples = packed & 0xF_FFFF_FFFF
        md5 = Array(body[18..<34])
    }

    /// The 34 bytes of the block's body.
    var bytes: [UInt8] {
        var body: [UInt8] = []
        body.appendBigEndian(UInt64(minimumBlockSize), bytes: 2)
        body.appendBigEndian(UInt64(maximumBlockSize), bytes: 2)
        body.appendBigEndian(UInt64(minimumFrameSize), bytes: 3)
        body.appendBigEndian(UInt64(maximumFrameSize), bytes: 3)
        let packed = UInt64(sampleRate) << 44 | UInt64(channels - 1) << 41 | UInt64(bitsPerSample - 1) << 36 | (totalSamples & 0xF_FFFF_FFFF)
        body.appendBigEndian(packed, bytes: 8)
        body += md5
        return body
    }
}

/// A SEEKTABLE point (RFC 9639 §8.5): 18 bytes.
struct FLACSeekPoint: Equatable {
    static let size = 18
    static let placeholderSample = UInt64.max

    var sample: UInt64
    /// Bytes from the first frame's start to the frame holding `sample`.
    var offset: UInt64
    var frameSamples: Int

    var isPlaceholder: Bool { sample == Self.placeholderSample }
    static let placeholder = FLACSeekPoint(sample: placeholderSample, offset: 0, frameSamples: 0)

    static func points(in body: UnsafeRawBufferPointer) -> [FLACSeekPoint] {
        (0..<(body.count / size)).map { index in
            FLACSeekPoint(sample: body.bigEndian(at: index * size, bytes: 8), offset: body.bigEndian(at: index * size + 8, bytes: 8),
                          frameSamples: Int(body.bigEndian(at: index * size + 16, bytes: 2)))
        }
    }

    var bytes: [UInt8] {
        var point: [UInt8] = []
        point.appendBigEndian(sample, bytes: 8)
        point.appendBigEndian(offset, bytes: 8)
        point.appendBigEndian(UInt64(frameSamples), bytes: 2)
        return point
    }
}
