import Encoding
#if canImport(Glibc)
import Glibc
#endif

/// The part of a finished file's header where hark kept room for values known only at the end
/// (`ClockStamp`, `LoudnessStamp`), read from the file, with where each of its bytes lies:
///
/// - FLAC: the VORBIS_COMMENT metadata block's body, found by walking the metadata blocks;
/// - Ogg Opus: the OpusTags packet, gathered from the pages it spans (after OpusHead's);
/// - WAV: the `bext` chunk's body, found by walking the chunks before `data`.
///
/// Found by the file's structure, not by searching its first bytes for the placeholders' text:
/// tags of a few hundred kB (cover art, long notes) put the room past any fixed window, and a tag
/// of the user's may read just like a placeholder. Edits change bytes in place, never the length.
struct HeaderRoom {
    /// The bytes as read, then as the edits leave them.
    var bytes: [UInt8]
    /// Where `bytes` lie in the file: runs of consecutive bytes (one for FLAC and WAV; one per page
    /// for Ogg, whose page headers lie between them), in order, covering `bytes` exactly.
    let runs: [(fileOffset: Int, count: Int)]
    /// Ogg: each run's page (offset and length), whose CRC is computed again when the run changed.
    let pages: [(offset: Int, length: Int)]
    /// FLAC and Opus: where the comment list starts in `bytes` (after OpusTags' magic).
    let commentListStart: Int?
    /// Keys the user set (upper case): their comments are the user's, whatever they say.
    let userKeys: Set<String>

    /// The most bytes of tags read: FLAC's block length field holds 16 MiB; an OpusTags packet
    /// longer than that is not one hark wrote.
    static let largestRoom = 1 << 24

    /// Reads the room from the file open on `descriptor`; nil for raw PCM (no header) and for a
    /// file whose structure does not hold one where hark puts it.
    static func read(from descriptor: Int32, codec: CodecSettings) -> HeaderRoom? {
        let userKeys = Set(codec.tags.entries.map { $0.key.uppercased() })
        switch codec {
        case .flac:
            guard let (offset, count) = flacCommentBlock(descriptor),
                  let bytes = readBytes(descriptor, at: offset, count: count) else { return nil }
            return HeaderRoom(bytes: bytes, runs: [(offset, count)], pages: [], commentListStart: 0, userKeys: userKeys)
        case .opus:
            return opusTags(descriptor, userKeys: userKeys)
        case .wav:
            guard let (offset, count) = wavChunk("bext", in: descriptor),
                  let bytes = readBytes(descriptor, at: offset, count: count) else { return nil }
            return HeaderRoom(bytes: bytes, runs: [(offset, count)], pages: [], commentListStart: nil, userKeys: userKeys)
        case .raw:
            return nil
        }
    }

    /// Whether the room is a WAV file's `bext` chunk whole (its fields at their offsets in `bytes`).
    var isBroadcastExtension: Bool {
        commentListStart == nil && bytes.count >= WAVHeader.broadcastExtensionSize
    }

    // MARK: Comments (FLAC, Opus)

    /// Writes `value` over the placeholder of hark's own `key`: the last comment that reads exactly
    /// `KEY=placeholder` (hark's tags follow the user's, `AutomaticTags`). Never a key the user set:
    /// hark then reserved none, and such a comment is the user's. False when there is none.
    mutating func overwriteComment(key: String, placeholder: String, with value: String) -> Bool {
        guard !userKeys.contains(key.uppercased()), value.utf8.count == placeholder.utf8.count,
              let range = lastComment(equalTo: key + "=" + placeholder) else { return false }
        let valueStart = range.lowerBound + key.utf8.count + 1
        bytes.replaceSubrange(valueStart..<range.upperBound, with: Array(value.utf8))
        return true
    }

    /// Whether hark's comment `KEY=value` is there (a key the user set is not hark's).
    func hasComment(key: String, value: String) -> Bool {
        !userKeys.contains(key.uppercased()) && lastComment(equalTo: key + "=" + value) != nil
    }

    /// The range in `bytes` of the last comment whose text is exactly `text`: a Vorbis comment list
    /// is a vendor string and a count, each comment after it a little-endian 32-bit length and
    /// that many bytes. Nil when there is none, or the list is not whole.
    private func lastComment(equalTo text: String) -> Range<Int>? {
        guard let start = commentListStart else { return nil }
        let wanted = Array(text.utf8)
        guard let vendorLength = littleEndian32(at: start) else { return nil }
        var position = start + 4 + vendorLength
        guard let count = littleEndian32(at: position) else { return nil }
        position += 4
        var found: Range<Int>?
        for _ in 0..<count {
            guard let length = littleEndian32(at: position), position + 4 + length <= bytes.count else { return found }
            let comment = (position + 4)..<(position + 4 + length)
            if length == wanted.count, bytes[comment].elementsEqual(wanted) { found = comment }
            position = comment.upperBound
        }
        return found
    }

    private func littleEndian32(at offset: Int) -> Int? {
        guard offset >= 0, offset + 4 <= bytes.count else { return nil }
        return Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
    }

    // MARK: Finding the room

    /// FLAC's VORBIS_COMMENT block (type 4): its body's offset and length.
    private static func flacCommentBlock(_ descriptor: Int32) -> (Int, Int)? {
        guard readBytes(descriptor, at: 0, count: 4) == Array("fLaC".utf8) else { return nil }
        var position = 4
        while let header = readBytes(descriptor, at: position, count: 4) {
            let length = Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            if header[0] & 0x7F == 4 { return (position + 4, length) }
            if header[0] & 0x80 != 0 { return nil }  // the last metadata block
            position += 4 + length
        }
        return nil
    }

    /// The OpusTags packet: it starts on the second page (after OpusHead's) and ends at the first
    /// lacing value under 255, possibly pages later.
    private static func opusTags(_ descriptor: Int32, userKeys: Set<String>) -> HeaderRoom? {
        guard let first = oggPage(descriptor, at: 0) else { return nil }
        var position = first.offset + first.headerLength + first.lacing.reduce(0) { $0 + Int($1) }
        var bytes: [UInt8] = [], runs: [(fileOffset: Int, count: Int)] = [], pages: [(offset: Int, length: Int)] = []
        while let page = oggPage(descriptor, at: position) {
            let bodyLength = page.lacing.reduce(0) { $0 + Int($1) }
            guard !page.lacing.isEmpty else { position = page.offset + page.headerLength; continue }
            // The packet's part of this page: up to and with the first lacing value under 255.
            let end = page.lacing.firstIndex { $0 < 255 }
            let partLength = page.lacing[...(end ?? page.lacing.count - 1)].reduce(0) { $0 + Int($1) }
            guard bytes.count + partLength <= largestRoom,
                  let part = readBytes(descriptor, at: page.offset + page.headerLength, count: partLength) else { return nil }
            bytes += part
            runs.append((page.offset + page.headerLength, partLength))
            pages.append((page.offset, page.headerLength + bodyLength))
            if end != nil { break }
            position = page.offset + page.headerLength + bodyLength
        }
        guard bytes.starts(with: Array("OpusTags".utf8)) else { return nil }
        return HeaderRoom(bytes: bytes, runs: runs, pages: pages, commentListStart: 8, userKeys: userKeys)
    }

    /// An Ogg page's header at `offset`: its length (27 bytes and the lacing values) and the values.
    private static func oggPage(_ descriptor: Int32, at offset: Int) -> (offset: Int, headerLength: Int, lacing: [UInt8])? {
        guard let header = readBytes(descriptor, at: offset, count: 27), header.starts(with: Array("OggS".utf8)),
              let lacing = readBytes(descriptor, at: offset + 27, count: Int(header[26])) else { return nil }
        return (offset, 27 + lacing.count, lacing)
    }

    /// A WAV chunk's body (offset and length), among those before `data` (RIFF, or RF64 with `ds64`).
    private static func wavChunk(_ id: String, in descriptor: Int32) -> (Int, Int)? {
        var position = 12
        while let header = readBytes(descriptor, at: position, count: 8) {
            let size = Int(header[4]) | Int(header[5]) << 8 | Int(header[6]) << 16 | Int(header[7]) << 24
            if header[0..<4].elementsEqual(Array(id.utf8)) { return (position + 8, size) }
            if header[0..<4].elementsEqual(Array("data".utf8)) { return nil }
            position += 8 + size + size % 2
        }
        return nil
    }

    /// Exactly `count` bytes at `offset`, or nil (a short file, an error).
    static func readBytes(_ descriptor: Int32, at offset: Int, count: Int) -> [UInt8]? {
        guard count >= 0, count <= largestRoom else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset + done)) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return nil }
            done += got
        }
        return bytes
    }
}
