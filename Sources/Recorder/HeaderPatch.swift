import Encoding
#if canImport(Glibc)
import Glibc
#endif

/// Writes values a finished file's header kept room for (`ClockStamp`, `LoudnessStamp`): reads
/// the room (`HeaderRoom`: FLAC's tags, Ogg Opus's OpusTags packet, WAV's `bext`), lets each edit
/// change it in place (never its length), writes back the bytes that changed, recomputes the CRC
/// of each Ogg page they lie in, then syncs the file.
///
/// Not real-time code: the session thread runs it after the encoders have finished.
struct HeaderPatch {
    /// Applies `edits` to the header of the file open (read-write) on `descriptor`, as
    /// `FinishedFile.reopen` gives it; each edit returns whether it changed something. Writes
    /// only when one did. False when the file has no room where hark puts it (raw PCM; a file
    /// changed under hark), or writing failed.
    @discardableResult
    static func apply(to descriptor: Int32, codec: CodecSettings, edits: [(inout HeaderRoom) -> Bool]) -> Bool {
        guard var room = HeaderRoom.read(from: descriptor, codec: codec) else { return false }
        let original = room.bytes
        var changed = false
        for edit in edits where edit(&room) { changed = true }
        guard changed else { return true }
        var wrote = false, start = 0
        for (index, run) in room.runs.enumerated() {
            defer { start += run.count }
            // Only the changed bytes go back (a few dozen in the tags, a few hundred in `bext`):
            // the rest, as large as the user's tags, is already on disk as it is.
            guard let span = changedSpan(from: original[start..<(start + run.count)], to: room.bytes[start..<(start + run.count)]) else { continue }
            let fileOffset = run.fileOffset + (span.lowerBound - start)
            guard writeAll(Array(room.bytes[span]), to: descriptor, at: fileOffset) else { return false }
            if index < room.pages.count, !resealOggPage(room.pages[index], in: descriptor) { return false }
            wrote = true
        }
        if wrote { _ = fsync(descriptor) }
        return true
    }

    /// The bytes from the first that differs to the last that does, as indices of the slices; nil
    /// when none does. The two have the same indices (edits never change the length).
    static func changedSpan(from original: ArraySlice<UInt8>, to edited: ArraySlice<UInt8>) -> ClosedRange<Int>? {
        guard let first = edited.indices.first(where: { edited[$0] != original[$0] }),
              let last = edited.indices.last(where: { edited[$0] != original[$0] }) else { return nil }
        return first...last
    }

    /// Computes an Ogg page's CRC again, once its bytes have changed (the CRC is over the whole
    /// page with the CRC field zero).
    private static func resealOggPage(_ page: (offset: Int, length: Int), in descriptor: Int32) -> Bool {
        guard let bytes = HeaderRoom.readBytes(descriptor, at: page.offset, count: page.length) else { return false }
        return writeAll(Array(OggPage.withChecksum(bytes)[22..<26]), to: descriptor, at: page.offset + 22)
    }

    private static func writeAll(_ bytes: [UInt8], to descriptor: Int32, at offset: Int) -> Bool {
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + done, bytes.count - done, off_t(offset + done)) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            done += written
        }
        return true
    }
}
