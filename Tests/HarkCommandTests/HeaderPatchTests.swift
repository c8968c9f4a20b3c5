import Encoding
import Foundation
import SignalGenerator
import Testing
@testable import Recorder

/// `HeaderPatch` writes back only the bytes its edits changed: the file ends as a whole rewrite
/// would leave it, and the thread's own write count (`/proc/thread-self/io`) shows how many bytes
/// went to the file.
@Suite struct HeaderPatchTests {
    /// 300 KB of noise (more than the 256 KiB the patch reads) with two placeholders 4 KB apart.
    static func makeFile() throws -> (path: String, bytes: [UInt8]) {
        var random = SplitMix64(seed: 0x4844_5250)
        var bytes = (0..<300_000).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        bytes.replaceSubrange(1_000..<1_012, with: Array("TIME=AAAAAAA".utf8))
        bytes.replaceSubrange(5_000..<5_010, with: Array("GAIN=BBBBB".utf8))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hark-patch-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    /// Bytes this thread has passed to write(2) and its kin so far.
    static func bytesWrittenByThisThread() throws -> Int {
        let text = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("wchar:") })
        return try #require(Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces)))
    }

    @Test func writesBackOnlyTheChangedSpanAndLeavesTheRestAsItWas() throws {
        let (path, original) = try Self.makeFile()
        defer { unlink(path) }
        let edits: [(inout [UInt8]) -> Bool] = [
            { HeaderPatch.replace("TIME=AAAAAAA", with: "TIME=1234567", in: &$0) },
            { HeaderPatch.replace("GAIN=BBBBB", with: "GAIN=-6.50", in: &$0) },
        ]
        let before = try Self.bytesWrittenByThisThread()
        let descriptor = open(path, O_RDWR)
        defer { close(descriptor) }
        HeaderPatch.apply(to: descriptor, codec: .flac(FLACSettings()), edits: edits)
        let written = try Self.bytesWrittenByThisThread() - before

        var expected = original
        expected.replaceSubrange(1_000..<1_012, with: Array("TIME=1234567".utf8))
        expected.replaceSubrange(5_000..<5_010, with: Array("GAIN=-6.50".utf8))
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == expected)
        // From the first changed byte ("TIME=" is unchanged) to the last ("0" of "-6.50").
        #expect(written == 5_010 - 1_005, "\(written) bytes written")
    }

    @Test func anEditThatChangesNothingWritesNothing() throws {
        let (path, original) = try Self.makeFile()
        defer { unlink(path) }
        let before = try Self.bytesWrittenByThisThread()
        // Reports a change but writes the same bytes: nothing differs, so nothing is written.
        let descriptor = open(path, O_RDWR)
        defer { close(descriptor) }
        HeaderPatch.apply(to: descriptor, codec: .flac(FLACSettings()), edits: [{ HeaderPatch.replace("TIME=AAAAAAA", with: "TIME=AAAAAAA", in: &$0) }])
        #expect(try Self.bytesWrittenByThisThread() - before == 0)
        #expect(Array(try Data(contentsOf: URL(fileURLWithPath: path))) == original)
    }

    /// A finished file is found again only as the file that was written: a name that now leads
    /// to another file, or nowhere, gives no descriptor, and says so; an open file moved is
    /// found where it went, and one whose name was taken is said to have lost it.
    @Test func aFinishedFileIsFoundAgainOnlyAsTheFileWritten() throws {
        let (path, _) = try Self.makeFile()
        let (other, _) = try Self.makeFile()
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
        #expect(HeaderPatch.changedSpan(from: [1, 2, 3, 4], to: [1, 2, 3, 4]) == nil)
        #expect(HeaderPatch.changedSpan(from: [1, 2, 3, 4], to: [9, 2, 3, 4]) == 0...0)
        #expect(HeaderPatch.changedSpan(from: [1, 2, 3, 4], to: [1, 9, 3, 9]) == 1...3)
        #expect(HeaderPatch.changedSpan(from: [], to: []) == nil)
    }
}
