import AudioFormat
import Foundation
import Testing

/// `hark repair` on files a tagger has given an ID3v1 tag (128 bytes appended at the very end, as
/// players' libraries and taggers do to any file): the tag is no damage, and stays where it is.
@Suite struct RepairTaggedFileTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    /// An ID3v1 tag: "TAG", then title, artist, album, year, comment and genre, 128 bytes in all.
    /// (Made afresh each time: a `Data` held in a static is reported by LeakSanitizer.)
    static var id3v1Tag: Data {
        var tag = Data("TAG".utf8) + Data("A title".utf8) + Data(repeating: 0, count: 30 - 7)
        tag += Data(repeating: 0x20, count: 128 - 1 - tag.count)
        return tag + Data([12])
    }

    /// A whole file with a tag is left byte for byte; one killed by a crash and then tagged is
    /// repaired with the tag kept at its end, its audio the input's start, and needs nothing more.
    /// (Until 2026-11-29 only FLAC's tag was kept: a whole WAV's tag was taken for stale sizes and
    /// read as 32 frames of audio, and an Ogg Opus file's was cut as bytes after its stream.)
    @Test(arguments: ["flac", "opus", "wav"])
    func aTaggersID3v1TagIsKeptWholeFileOrTorn(_ codec: String) throws {
        let signal = TestSignal(format: Self.format, frames: 4 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        let peer = try #require(try RepairCommandTests.peerFiles(rig, seconds: 4).first { $0.codec == codec }).path
        let stream = try RepairTools.bytes(peer)
        let name = ["flac": "FLAC", "opus": "Ogg Opus", "wav": "WAV"][codec]!

        let whole = rig.path("whole.\(codec)")
        try (stream + Self.id3v1Tag).write(to: URL(fileURLWithPath: whole))
        let checked = try RepairTools.repair(["--write", whole], rig: rig)
        #expect(checked.status == 0, "\(checked.standardError)")
        #expect(checked.errorLines.first?.hasPrefix("hark: \(whole): nothing to do (\(name), ") == true, "\(checked.standardError)")
        try expectSameElements(RepairTools.bytes(whole), stream + Self.id3v1Tag, "a whole tagged file was changed")

        // Killed by a crash, then tagged by a player's library: the tag follows a torn frame or page.
        let torn = rig.path("torn.\(codec)")
        try (stream.prefix(stream.count * 2 / 3 + 1) + Self.id3v1Tag).write(to: URL(fileURLWithPath: torn))
        let repaired = try RepairTools.repair(["--write", torn], rig: rig)
        #expect(repaired.status == 1, "\(repaired.standardError)")
        #expect(repaired.standardError.contains("repaired (\(name))"), "\(repaired.standardError)")
        let result = try RepairTools.bytes(torn)
        expectSameElements(result.suffix(128), Self.id3v1Tag, "the tag is kept at the end")
        let untagged = rig.path("untagged.\(codec)")
        try result.dropLast(128).write(to: URL(fileURLWithPath: untagged))
        #expect(try RepairTools.isClean(untagged, codec: codec), "the repaired stream, without its tag")
        let decoded = try RepairTools.decode(untagged, codec: codec)
        #expect(decoded.count > signal.samples.count / 3)  // opusenc's pages are a second long
        if codec != "opus" {
            expectSameElements(decoded, signal.samples.prefix(decoded.count), "the kept audio is the input's start")
        }
        let again = try RepairTools.repair([torn], rig: rig)
        #expect(again.status == 0, "a repaired tagged file needs nothing more: \(again.standardError)")
    }
}
