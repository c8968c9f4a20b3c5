import AudioFormat

/// The header of a WAV file as hark writes it, from "RIFF" to the data chunk's size field:
///
///     RIFF <size> WAVE
///     JUNK <28>  28 zero bytes        ← becomes "ds64" when the file passes 4 GiB (EBU Tech 3306)
///     fmt  <16 or 40> …               ← WAVE_FORMAT_PCM, or WAVE_FORMAT_EXTENSIBLE with a channel mask
///     fact <4> frames                 ← with EXTENSIBLE: the RIFF specification asks it of every
///                                       format but WAVE_FORMAT_PCM, as sox and libsndfile do
///                                       (0xFFFFFFFF once RF64, as EBU Tech 3306 says: ds64
///                                       holds the count then)
///     LIST <n> INFO …                 ← the tags, when there are any
///     data <size>
///
/// The JUNK chunk is the room a `ds64` chunk needs, so a recording that grows past 4 GiB becomes
/// RF64 in place, by rewriting this header only: "RIFF" → "RF64", the 32-bit sizes → 0xFFFFFFFF,
/// "JUNK" → "ds64" with the 64-bit sizes. Readers that know neither skip JUNK as the standard asks.
///
/// `update` patches the size fields in the bytes it holds; it allocates nothing, so the encoder
/// thread can call it while recording.
public struct WAVHeader {
    /// How one sample is stored in the file.
    public enum Encoding: Sendable, Equatable {
        /// Signed little-endian integers of this many bytes (2, 3 or 4).
        case integer(bytes: Int)
        /// IEEE 754 32-bit floats.
        case float32

        public var bytesPerSample: Int {
            switch self {
            case .integer(let bytes): bytes
            case .float32: 4
            }
        }
    }

    /// The whole header; `data`'s first byte follows it.
    public private(set) var bytes: [UInt8]
    public let encoding: Encoding
    public let channels: Int
    /// Bytes per frame in the file.
    public let blockAlign: Int
    /// Where the `fact` chunk's sample count is, when the header has one (WAVE_FORMAT_EXTENSIBLE).
    private let factSampleCountOffset: Int?

    /// The size that means "unknown", for a stream written to a pipe (readers read to the end).
    public static let unknownSize: UInt32 = 0xFFFF_FFFF
    static let ds64BodySize = 28

    /// How `format`'s samples are stored: 16-bit and 32-bit integers as they are, ALSA's 24-bit
    /// samples in 4-byte containers packed into 3 bytes, floats as floats.
    public static func encoding(for format: SampleFormat) -> Encoding {
        switch format {
        case .s16LE: .integer(bytes: 2)
        case .s24LE: .integer(bytes: 3)
        case .s32LE: .integer(bytes: 4)
        case .floatLE: .float32
        }
    }

    /// The mask of WAVE's default layout for `channels` channels (`ChannelLayout.waveDefault`:
    /// 5.1 for six), what a reader assumes when nothing else says; 0 beyond eight.
    public static func defaultChannelMask(channels: Int) -> UInt32 {
        ChannelLayout.waveDefault(channels: channels)?.waveMask ?? 0
    }

    /// The size of a `bext` chunk's body (EBU Tech 3285, version 2, no coding history).
    public static let broadcastExtensionSize = 602

    /// The header for `format` with `tags` as a LIST/INFO chunk, its sizes set to "unknown" until
    /// `update` sets them. With `broadcastExtension`, a Broadcast WAVE `bext` chunk follows `fmt `:
    /// version 2, originator "hark", its time fields zero until the recording has ended and
    /// `ClockStamp` writes them (the first sample's time is not known before).
    public init(format: PCMFormat, tags: StreamTags = StreamTags(), channelMask: UInt32? = nil, broadcastExtension: Bool = false) {
        encoding = Self.encoding(for: format.sampleFormat)
        channels = format.channels
        blockAlign = encoding.bytesPerSample * format.channels
        // WAVE_FORMAT_PCM only for what every reader took before EXTENSIBLE existed: 16-bit
        // integers in one or two channels, in mono's or stereo's speakers. Everything else says
        // exactly what it is, a pair that is not FL,FR (FC,LFE) or one channel that is not the
        // centre (FR alone) too, as ffmpeg writes them: WAVE_FORMAT_PCM has no mask to say it.
        let defaultSpeakers = channelMask.map { $0 == Self.defaultChannelMask(channels: format.channels) } ?? true
        let extensible = !(encoding == .integer(bytes: 2) && format.channels <= 2 && defaultSpeakers)
        var header: [UInt8] = []
        header.append(contentsOf: Array("RIFF".utf8)); header.appendLittleEndian(Self.unknownSize)
        header.append(contentsOf: Array("WAVE".utf8))
        header.append(contentsOf: Array("JUNK".utf8)); header.appendLittleEndian(UInt32(Self.ds64BodySize))
        header.append(contentsOf: [UInt8](repeating: 0, count: Self.ds64BodySize))
        header.append(contentsOf: Array("fmt ".utf8)); header.appendLittleEndian(UInt32(extensible ? 40 : 16))
        let formatTag: UInt16 = extensible ? 0xFFFE : 1
        header.appendLittleEndian(formatTag)
        header.appendLittleEndian(UInt16(format.channels))
        header.appendLittleEndian(UInt32(format.sampleRate))
        header.appendLittleEndian(UInt32(format.sampleRate * blockAlign))
        header.appendLittleEndian(UInt16(blockAlign))
        header.appendLittleEndian(UInt16(encoding.bytesPerSample * 8))
        if extensible {
            header.appendLittleEndian(UInt16(22))  // cbSize
            header.appendLittleEndian(UInt16(encoding.bytesPerSample * 8))  // valid bits: all of them
            header.appendLittleEndian(channelMask ?? Self.defaultChannelMask(channels: format.channels))
            // KSDATAFORMAT_SUBTYPE_PCM or _IEEE_FLOAT: the format code, then the fixed GUID tail.
            header.appendLittleEndian(UInt32(encoding == .float32 ? 3 : 1))
            header.append(contentsOf: [0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71])
        }
        if extensible {
            // Frames ("samples per channel" in the RIFF specification's words), unknown until the
            // first update, like the other sizes.
            header.append(contentsOf: Array("fact".utf8)); header.appendLittleEndian(UInt32(4))
            factSampleCountOffset = header.count
            header.appendLittleEndian(Self.unknownSize)
        } else {
            factSampleCountOffset = nil
        }
        if broadcastExtension {
            var body = [UInt8](repeating: 0, count: Self.broadcastExtensionSize)
            body.replaceSubrange(256..<260, with: Array("hark".utf8))  // Originator
            body[346] = 2  // Version (after Description, Originator, Reference, Date, Time, TimeReference)
            // Version 2's loudness fields (LoudnessValue, LoudnessRange, MaxTruePeakLevel,
            // MaxMomentaryLoudness, MaxShortTermLoudness): 0x7FFF, "not set", until the recording
            // has been measured; the UMID before them stays zero (none).
            for field in 0..<5 { body.replaceSubrange((412 + 2 * field)..<(414 + 2 * field), with: [0xFF, 0x7F]) }
            header.append(contentsOf: Array("bext".utf8)); header.appendLittleEndian(UInt32(Self.broadcastExtensionSize))
            header.append(contentsOf: body)
        }
        header.append(contentsOf: Self.infoChunk(tags))
        header.append(contentsOf: Array("data".utf8)); header.appendLittleEndian(Self.unknownSize)
        bytes = header
    }

    /// Sets the sizes for `dataBytes` of audio (plus `padding`, the pad byte a chunk of odd size
    /// needs at the very end): plain RIFF while the file fits 32-bit sizes, RF64 from then on.
    public mutating func update(dataBytes: Int, padding: Int = 0) {
        let fileBytes = bytes.count + dataBytes + padding
        let frames = UInt64(dataBytes / blockAlign)
        bytes.withUnsafeMutableBytes { header in
            if fileBytes - 8 <= Int(UInt32.max) - 1 {
                Self.put("RIFF", at: 0, in: header)
                Self.put(UInt32(fileBytes - 8), at: 4, in: header)
                Self.put("JUNK", at: 12, in: header)
                for index in 20..<(20 + Self.ds64BodySize) { header[index] = 0 }
                Self.put(UInt32(dataBytes), at: header.count - 4, in: header)
                if let fact = factSampleCountOffset { Self.put(UInt32(frames), at: fact, in: header) }
            } else {
                Self.put("RF64", at: 0, in: header)
                Self.put(Self.unknownSize, at: 4, in: header)
                Self.put("ds64", at: 12, in: header)
                Self.put(UInt64(fileBytes - 8), at: 20, in: header)
                Self.put(UInt64(dataBytes), at: 28, in: header)
                Self.put(frames, at: 36, in: header)
                Self.put(UInt32(0), at: 44, in: header)  // no table of other chunks' sizes
                Self.put(Self.unknownSize, at: header.count - 4, in: header)
                if let fact = factSampleCountOffset { Self.put(Self.unknownSize, at: fact, in: header) }
            }
        }
    }

    /// The LIST/INFO chunk for the tags RIFF INFO has fields for; empty when there are none. A key
    /// given more than once (`--tag ARTIST=Ada --tag ARTIST=Grace`) has its values joined with
    /// "; " (an INFO field is one string; ffmpeg joins them so too), where the first alone was
    /// kept. Other tags (HARK_CAPTURE and the like) have no INFO field and are left out.
    static func infoChunk(_ tags: StreamTags) -> [UInt8] {
        let fields: [(key: String, id: String)] = [
            ("TITLE", "INAM"), ("ARTIST", "IART"), ("ALBUM", "IPRD"), ("TRACKNUMBER", "ITRK"), ("DATE", "ICRD"),
            ("GENRE", "IGNR"), ("COMMENT", "ICMT"), ("COPYRIGHT", "ICOP"), ("ENCODER", "ISFT"),
        ]
        var body: [UInt8] = Array("INFO".utf8)
        for (key, id) in fields {
            let values = tags.entries.filter { $0.key == key }.map(\.value)
            guard !values.isEmpty else { continue }
            let value = values.joined(separator: "; ")
            let text = Array(value.utf8) + [0]  // INFO strings are NUL-terminated
            body.append(contentsOf: Array(id.utf8))
            body.appendLittleEndian(UInt32(text.count))
            body.append(contentsOf: text)
            if text.count % 2 == 1 { body.append(0) }  // every chunk starts on an even offset
        }
        guard body.count > 4 else { return [] }
        var chunk: [UInt8] = Array("LIST".utf8)
        chunk.appendLittleEndian(UInt32(body.count))
        return chunk + body
    }

    private static func put(_ text: StaticString, at offset: Int, in header: UnsafeMutableRawBufferPointer) {
        text.withUTF8Buffer { id in
            for index in 0..<4 { header[offset + index] = id[index] }
        }
    }

    private static func put<Value: FixedWidthInteger>(_ value: Value, at offset: Int, in header: UnsafeMutableRawBufferPointer) {
        withUnsafeBytes(of: value.littleEndian) { source in
            for index in 0..<source.count { header[offset + index] = source[index] }
        }
    }
}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian<Value: FixedWidthInteger>(_ value: Value) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
