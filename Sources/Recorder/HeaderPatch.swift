import Encoding
#if canImport(Glibc)
import Glibc
#endif

/// Writes values a finished file's header kept room for (`ClockStamp`, `LoudnessStamp`): reads the
/// first `searchBytes` of the file, lets each edit change them in place (never their length), and
/// writes back the bytes that changed, once, then syncs the file. In Ogg, every whole page's CRC
/// is computed again, as the OpusTags page has changed.
///
/// Not real-time code: the session thread runs it after the encoders have finished.
struct HeaderPatch {
    /// How far into a file the room can be: FLAC's STREAMINFO and tags come before its seek table,
    /// Ogg's OpusTags page right after OpusHead's, WAV's `bext` right after `fmt `.
    static let searchBytes = 256 * 1024

    /// Applies `edits` to the header of the file open (read-write) on `descriptor`, as
    /// `FinishedFile.reopen` gives it; each edit returns whether it changed something. Writes
    /// only when one did.
    static func apply(to descriptor: Int32, codec: CodecSettings, edits: [(inout [UInt8]) -> Bool]) {
        // Raw PCM has no header: nothing to read 256 KiB of audio for.
        if case .raw = codec { return }
        var header = [UInt8](repeating: 0, count: searchBytes)
        let count = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress!, $0.count, 0) }
        guard count > 0 else { return }
        header.removeSubrange(count...)
        let original = header
        var changed = false
        for edit in edits where edit(&header) { changed = true }
        if case .opus = codec, changed { changed = resealOggPages(&header) }
        guard changed, let span = changedSpan(from: original, to: header) else { return }
        // Only the changed bytes go back (a few hundred in WAV's `bext` or FLAC's tags): the rest
        // of the 256 KiB is mostly audio, already synced, that a whole write would dirty and the
        // fsync below write to storage a second time.
        let written = header[span].withUnsafeBytes { pwrite(descriptor, $0.baseAddress!, $0.count, off_t(span.lowerBound)) }
        if written == span.count { _ = fsync(descriptor) }
    }

    /// The bytes from the first that differs to the last that does; nil when none does. The two
    /// have the same length (edits never change it).
    static func changedSpan(from original: [UInt8], to edited: [UInt8]) -> ClosedRange<Int>? {
        guard let first = edited.indices.first(where: { edited[$0] != original[$0] }),
              let last = edited.indices.last(where: { edited[$0] != original[$0] }) else { return nil }
        return first...last
    }

    /// Writes `new` over the first `old` in `bytes`; false when `old` is missing or the lengths differ.
    static func replace(_ old: String, with new: String, in bytes: inout [UInt8]) -> Bool {
        let pattern = Array(old.utf8), replacement = Array(new.utf8)
        guard pattern.count == replacement.count, pattern.count <= bytes.count else { return false }
        for start in 0...(bytes.count - pattern.count) where bytes[start] == pattern[0] {
            if bytes[start..<(start + pattern.count)].elementsEqual(pattern) {
                bytes.replaceSubrange(start..<(start + pattern.count), with: replacement)
                return true
            }
        }
        return false
    }

    /// The offset of the body of the WAV chunk `id` within the header, if the header holds it whole.
    static func wavChunkBody(_ id: String, minimumSize: Int, in header: [UInt8]) -> Int? {
        var position = 12
        while position + 8 <= header.count {
            let size = Int(header[position + 4]) | Int(header[position + 5]) << 8 | Int(header[position + 6]) << 16 | Int(header[position + 7]) << 24
            if header[position..<(position + 4)].elementsEqual(Array(id.utf8)) {
                return size >= minimumSize && position + 8 + size <= header.count ? position + 8 : nil
            }
            position += 8 + size + size % 2
        }
        return nil
    }

    /// Computes every whole page's CRC again (only the OpusTags page has changed; the others come
    /// out as they were). False when the bytes do not start with Ogg pages.
    private static func resealOggPages(_ bytes: inout [UInt8]) -> Bool {
        var offset = 0
        while offset + 27 <= bytes.count, bytes[offset..<(offset + 4)].elementsEqual(Array("OggS".utf8)) {
            let segments = Int(bytes[offset + 26])
            guard offset + 27 + segments <= bytes.count else { break }
            let bodyLength = bytes[(offset + 27)..<(offset + 27 + segments)].reduce(0) { $0 + Int($1) }
            let end = offset + 27 + segments + bodyLength
            guard end <= bytes.count else { break }
            var page = Array(bytes[offset..<end])
            page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
            let crc = OggPage.crc32(page)
            for index in 0..<4 { bytes[offset + 22 + index] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * index)) }
            offset = end
        }
        return offset > 0
    }
}
