import AudioFormat
import Foundation
import Testing

/// A recording's file moved, replaced or deleted while it is recorded. hark writes the first
/// sample's time and the loudness into a finished file's header at the end: it must reach its own
/// file to do so (it reopened the name, so a moved file kept its placeholders and a file renamed
/// over the name, another recorder's, got this recording's values), and it says when a file is
/// not where it was written.
@Suite struct OutputMovedTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    private func pacedRig(seconds: Int) throws -> ALSATestRig {
        let rig = try ALSATestRig(input: TestSignal(format: Self.format, frames: seconds * 48_000).alsaBytes)
        try rig.startPulseAudio()
        return rig
    }

    private func tag(_ name: String, of path: String) throws -> String? {
        try FLACTools.tags(path).first { $0.hasPrefix(name + "=") }.map { String($0.dropFirst(name.count + 1)) }
    }

    /// Renames a copy of `path`, as it is now, over `path` (what a second recorder given the same
    /// name does), and returns the copy's bytes. The copy must still hold the placeholders: the
    /// recording has not ended, so nothing has been stamped yet.
    private func takeTheName(of path: String, rig: ALSATestRig) throws -> Data {
        let other = rig.path("other.flac")
        try FileManager.default.copyItem(atPath: path, toPath: other)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: other))
        try #require(bytes.range(of: Data("HARK_FIRST_SAMPLE_TIME=0000-00-00".utf8)) != nil,
                     "the name was taken before the recording ended, and so before its files were stamped")
        try #require(rename(other, path) == 0)
        return bytes
    }

    /// Moving a file while it records (tidying a folder) leaves a finished file where it went.
    @Test func aFileMovedWhileItRecordsIsFinishedWhereItWent() throws {
        let rig = try pacedRig(seconds: 8)
        let output = rig.path("take.flac"), moved = rig.path("moved.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "3", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 0.5)
        try FileManager.default.moveItem(atPath: output, toPath: moved)
        let result = recording.wait()
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.errorLines.contains("hark: warning: '\(output)' was moved while it was recorded; it was finished where it went"),
                "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: output), "nothing is made under the old name")
        let firstSample = try #require(try tag("HARK_FIRST_SAMPLE_TIME", of: moved))
        #expect(!firstSample.hasPrefix("0000-00-00"), "the time was written: \(firstSample)")
        let gain = try #require(try tag("REPLAYGAIN_TRACK_GAIN", of: moved))
        #expect(gain != "+0.000 dB", "the loudness was written: \(gain)")
        #expect(try FLACTools.test(moved).status == 0)
    }

    /// Records with `arguments`, and once `audioIn` holds audio renames another file over
    /// `name`; that file must be left as it was. The recording's result.
    private func recordTakingTheName(of name: String, _ arguments: [String], onceAudioIn audioIn: String,
                                     rig: ALSATestRig) throws -> ToolResult {
        let recording = try startHark(["record", "-D", "pacedcap"] + arguments, rig: rig)
        try OutputGrowth.waitForFLACAudio(audioIn, seconds: 0.3)
        let otherBytes = try takeTheName(of: name, rig: rig)
        let result = recording.wait()
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: name)) == otherBytes, "the other file is left as it was")
        return result
    }

    /// Another file renamed over the name while it records (a second recorder given the same
    /// `-o`): that file keeps its own header, and hark says its recording is in no file.
    @Test func aFileRenamedOverTheNameKeepsItsOwnHeader() throws {
        let rig = try pacedRig(seconds: 8)
        let output = rig.path("same.flac")
        let result = try recordTakingTheName(of: output, ["-d", "3", "-o", output], onceAudioIn: output, rig: rig)
        #expect(result.errorLines.contains("hark: warning: '\(output)' was deleted or replaced by another file while it was recorded: "
            + "this recording is not in it"), "\(result.standardError)")
    }

    /// A split's finished part whose name is then taken by another file: that file is left alone,
    /// and the part named in a warning.
    @Test func aFinishedPartWhoseNameIsTakenIsLeftAloneAndNamed() throws {
        let rig = try pacedRig(seconds: 10)
        let first = rig.path("part.flac"), second = rig.path("part-2.flac")
        let result = try recordTakingTheName(of: first, ["-d", "6", "--max-file-time", "1", "-o", first], onceAudioIn: second, rig: rig)
        #expect(result.errorLines.contains("hark: warning: '\(first)' now names another file, left as it is: the part written there "
                    + "was moved away or replaced, without its first sample's time and loudness"), "\(result.standardError)")
        #expect(!result.standardError.contains("'\(second)' was"), "\(result.standardError)")
    }
}
