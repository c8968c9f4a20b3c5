import Encoding
import Foundation
import SignalGenerator
import Testing
@testable import Recorder

/// `HeaderPatch` finds the room by the file's structure (`HeaderRoom`) and writes back only the
/// bytes its edits changed: the file ends as a whole rewrite would leave it, and the thread's own
/// write count (`/proc/thread-self/io`) shows how many bytes went to the file.
@Suite struct HeaderPatchTests {
    /// A Vorbis comment list: vendor string, count, then each comment with its length.
    static func commentList(_ comments: [String]) -> [UInt8] {
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) } }
        return le32(1) + Array("v".utf8) + le32(comments.count) + comments.flatMap { le32($0.utf8.count) + Array($0.utf8) }
    }

    /// A FLAC file's start: STREAMINFO, VORBIS_COMMENT with `comments`, PADDING (the last block),
    /// then 300 kB of noise standing for frames.
    static func flacFile(_ comments: [String]) -> [UInt8] {
        func block(_ type: UInt8, _ body: [UInt8], last: Bool = false) -> [UInt8] {
            [type | (last ? 0x80 : 0), UInt8(body.count >> 16 & 0xFF), UInt8(body.count >> 8 & 0xFF), UInt8(body.count & 0xFF)] + body
        }
        var random = SplitMix64(seed: 0x4844_5250)
        let frames = (0..<300_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        return Array("fLaC".utf8) + block(0, [UInt8](repeating: 0, count: 34)) + block(4, commentList(comments))
            + block(1, [UInt8](repeating: 0, count: 64), last: true) + frames
    }

    static func write(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hark-patch-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The user's tags as the recording was given them.
    static func userTags(_ entries: [(String, String)]) -> StreamTags {
        var tags = StreamTags()
        for (key, value) in entries { tags.add(key, value) }
        return tags
    }

    /// Bytes this thread has passed to write(2) and its kin so far.
    static func bytesWrittenByThisThread() throws -> Int {
        let text = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("wchar:") })
        return try #require(Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces)))
    }

    /// Only hark's own comment changes, behind 300 kB of the user's tags (past the 256 KiB the
    /// patch once searched), and not a comment of the user's that reads like a placeholder (one
    /// under a key the user set, which hark then did not reserve, or inside a longer comment),
    /// whichever comes first; the bytes written are those that changed.
    @Test func writesOnlyHarksOwnCommentsBehindLargeTagsAndLookalikes() throws {
        let large = "ART=" + String(repeating: "x", count: 300_000)
        let user = [large, "COMMENT=TIME=AAAAAAA", "GAIN=BBBBB"]
        let original = Self.flacFile(user + ["TIME=AAAAAAA", "ENCODER=hark"])
        let path = try Self.write(original)
        defer { unlink(path) }
        let codec = CodecSettings.flac(FLACSettings(tags: Self.userTags([("ART", String(large.dropFirst(4))), ("COMMENT", "TIME=AAAAAAA"), ("GAIN", "BBBBB")])))
        let edits: [(inout HeaderRoom) -> Bool] = [
            { $0.overwriteComment(key: "TIME", placeholder: "AAAAAAA", with: "1234567") },
            { $0.overwriteComment(key: "GAIN", placeholder: "BBBBB", with: "-6.50") },
        ]
        let before = try Self.bytesWrittenByThisThread()
        let descriptor = open(path, O_RDWR)
        defer { close(descriptor) }
        #expect(HeaderPatch.apply(to: descriptor, codec: codec, edits: edits))
        let written = try Self.bytesWrittenByThisThread() - before
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == Self.flacFile(user + ["TIME=1234567", "ENCODER=hark"]))
        #expect(written == 7, "\(written) bytes written")
    }

    @Test func anEditThatChangesNothingWritesNothing() throws {
        let original = Self.flacFile(["TIME=AAAAAAA"])
        let path = try Self.write(original)
        defer { unlink(path) }
        let before = try Self.bytesWrittenByThisThread()
        // Reports a change but writes the same bytes: nothing differs, so nothing is written.
        let descriptor = open(path, O_RDWR)
        defer { close(descriptor) }
        HeaderPatch.apply(to: descriptor, codec: .flac(FLACSettings()),
                          edits: [{ $0.overwriteComment(key: "TIME", placeholder: "AAAAAAA", with: "AAAAAAA") }])
        #expect(try Self.bytesWrittenByThisThread() - before == 0)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == original)
    }

    /// An Ogg page: header (version 0, `flags`, granule 0, serial 1, `sequence`, CRC), lacing, body.
    static func oggPage(_ body: [UInt8], lacing: [UInt8], sequence: UInt32, flags: UInt8 = 0) -> [UInt8] {
        var page = Array("OggS".utf8) + [0, flags] + [UInt8](repeating: 0, count: 8) + [1, 0, 0, 0]
            + (0..<4).map { UInt8(truncatingIfNeeded: sequence >> (8 * $0)) } + [0, 0, 0, 0] + [UInt8(lacing.count)] + lacing + body
        let crc = OggPage.crc32(page)
        for index in 0..<4 { page[22 + index] = UInt8(truncatingIfNeeded: crc >> UInt32(8 * index)) }
        return page
    }

    /// Whether every page from the start has the CRC its bytes give.
    static func pagesAreSealed(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset + 27 <= bytes.count {
            let lacing = Int(bytes[offset + 26])
            let end = offset + 27 + lacing + bytes[(offset + 27)..<(offset + 27 + lacing)].reduce(0) { $0 + Int($1) }
            var page = Array(bytes[offset..<end])
            let stored = page[22..<26]
            page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
            let crc = OggPage.crc32(page)
            if !stored.elementsEqual((0..<4).map { UInt8(truncatingIfNeeded: crc >> UInt32(8 * $0)) }) { return false }
            offset = end
        }
        return offset == bytes.count
    }

    /// An OpusTags packet over two pages (a tag of 65 kB: more than a page holds), hark's comment
    /// cut by the page boundary: the packet reads as written, and both pages are sealed again.
    @Test func anOpusTagsCommentAcrossTwoPagesIsWrittenAndBothPagesSealed() throws {
        // 21 bytes before the user's comment's text (magic, vendor, count, its length), then the
        // length of hark's and "TIME=": the page's 65,025 bytes end 6 bytes into the placeholder.
        let user = "ART=" + String(repeating: "y", count: 65_025 - 21 - 4 - 4 - 5 - 6)
        func packet(_ time: String) -> [UInt8] { Array("OpusTags".utf8) + Self.commentList([user, "TIME=" + time]) }
        func file(_ time: String) -> [UInt8] {
            let packet = packet(time)
            // The first page takes 255 segments of 255 bytes, which puts the boundary in the
            // placeholder: the packet goes on, the second page flagged as continuing it.
            let firstPart = 255 * 255
            let rest = packet.count - firstPart
            let head = Self.oggPage(Array("OpusHead".utf8) + [UInt8](repeating: 0, count: 11), lacing: [19], sequence: 0, flags: 2)
            return head + Self.oggPage(Array(packet[..<firstPart]), lacing: [UInt8](repeating: 255, count: 255), sequence: 1)
                + Self.oggPage(Array(packet[firstPart...]), lacing: [UInt8](repeating: 255, count: rest / 255) + [UInt8(rest % 255)],
                               sequence: 2, flags: 1)
        }
        let original = file("AAAAAAAAAAAA")
        #expect(packet("AAAAAAAAAAAA").count - 255 * 255 == 6, "the boundary falls inside the placeholder")
        let path = try Self.write(original)
        defer { unlink(path) }
        let descriptor = open(path, O_RDWR)
        defer { close(descriptor) }
        #expect(HeaderPatch.apply(to: descriptor, codec: .opus(OpusSettings()),
                                  edits: [{ $0.overwriteComment(key: "TIME", placeholder: "AAAAAAAAAAAA", with: "123456789012") }]))
        let patched = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(patched == file("123456789012"))
        #expect(Self.pagesAreSealed(patched))
    }

    /// A finished file is found again only as the file that was written: a name that now leads
    /// to another file, or nowhere, gives no descriptor, and says so; an open file moved is
    /// found where it went, and one whose name was taken is said to have lost it.
    @Test func aFinishedFileIsFoundAgainOnlyAsTheFileWritten() throws {
        let path = try Self.write(Self.flacFile([]))
        let other = try Self.write(Self.flacFile([]))
        defer { unlink(path); unlink(other) }
        let written = try #require(FileIdentity(path: path))
        let (inPlace, here) = FinishedFile.reopen(.name(path, written), path: path, writing: true)
        #expect(inPlace != nil && here == .inPlace)
        if let inPlace { close(inPlace) }
        let (notOpened, stillHere) = FinishedFile.reopen(.name(path, written), path: path, writing: false)
        #expect(notOpened == nil && stillHere == .inPlace, "looked at, not opened, when there is nothing to write")
        #expect(FinishedFile.reopen(.name(path, nil), path: path, writing: true).whereabouts == .unverifiable)

        let open = Glibc.open(path, O_RDWR)
        defer { close(open) }
        let moved = path + ".moved"
        #expect(rename(path, moved) == 0)
        let (_, gone) = FinishedFile.reopen(.name(path, written), path: path, writing: true)
        #expect(gone == .gone)
        let (movedDescriptor, wentTo) = FinishedFile.reopen(.descriptor(open), path: path, writing: true)
        #expect(wentTo == .moved)
        if let movedDescriptor { close(movedDescriptor) }

        #expect(rename(other, path) == 0)
        let (none, replaced) = FinishedFile.reopen(.name(path, written), path: path, writing: true)
        #expect(none == nil && replaced == .replaced)
        #expect(unlink(moved) == 0)
        let (lostDescriptor, lost) = FinishedFile.reopen(.descriptor(open), path: path, writing: true)
        #expect(lost == .nameLost)
        if let lostDescriptor { close(lostDescriptor) }
    }

    @Test func changedSpanRunsFromTheFirstDifferenceToTheLast() {
        let original: [UInt8] = [0, 1, 2, 3, 4]
        #expect(HeaderPatch.changedSpan(from: original[1...], to: [0, 1, 2, 3, 4][1...]) == nil)
        #expect(HeaderPatch.changedSpan(from: original[1...], to: [0, 9, 2, 3, 4][1...]) == 1...1)
        #expect(HeaderPatch.changedSpan(from: original[1...], to: [9, 1, 9, 3, 9][1...]) == 2...4)
        #expect(HeaderPatch.changedSpan(from: original[0..<0], to: original[0..<0]) == nil)
    }
}
