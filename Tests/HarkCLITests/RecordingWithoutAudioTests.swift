import Foundation
import Testing

/// A recording that gets no audio at all (a source that never delivers, a sound server gone at
/// once, a stop or a revocation before the first period) writes nothing: a file is named only
/// once audio has come for it, so a file of that name is as it was, not replaced by a header
/// alone (raw: by an empty file), and a new name taken at the start (the library's, a time
/// pattern's) is given back. Until 2026-11-28 a file was named as capture started, and such a
/// recording replaced the file there with an empty one (the concurrency audit).
@Suite struct RecordingWithoutAudioTests {
    /// The rig's sound server with its sink suspended: the sink's monitor, which hark records
    /// (what the system plays: its own permission), delivers nothing until the sink is resumed.
    static func silentSource(_ rig: ALSATestRig) throws {
        try rig.startPulseAudio()
        try #require(try runHark(["permissions", "grant", "systemAudio"], rig: rig).status == 0)
        let suspended = try runTool("pactl", ["suspend-sink", "vmic", "1"], environment: rig.environment)
        try #require(suspended.status == 0, "\(suspended.standardError)")
    }

    static func files(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    /// Nothing comes for 5 s from the suspended source: the device is lost (74), and the FLAC file and the raw file there
    /// before are as they were, with nothing beside them; the log says nothing was recorded.
    @Test func aSourceThatNeverDeliversLeavesTheFilesThatWereThere() throws {
        let rig = try ALSATestRig(input: Data())
        try Self.silentSource(rig)
        let folder = rig.path("takes")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let flac = folder + "/keep.flac", raw = folder + "/keep.raw"
        for path in [flac, raw] { try "an earlier take".write(toFile: path, atomically: true, encoding: .utf8) }
        let result = try runHark(["record", "-D", "vmic.monitor", "-o", flac, "-o", raw], rig: rig, timeout: TestLoad.seconds(60))
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.errorLines.last == "hark: capture device lost: the device was suspended and did not resume", "\(result.standardError)")
        for path in [flac, raw] {
            #expect(result.standardError.contains("nothing written to \(path) (no audio came; nothing there was replaced)"), "\(result.standardError)")
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "an earlier take", "\(path)")
        }
        #expect(Self.files(in: folder) == ["keep.flac", "keep.raw"])
        let log = String(decoding: try runHark(["permissions", "log"], rig: rig).standardOutput, as: UTF8.self)
        #expect(log.contains("→ (nothing recorded)  0 s (0 frames") && log.contains("ended: device lost"), "\(log)")
    }

    /// Killed before its first audio, a recording leaves the file it would have replaced to that
    /// file: `hark repair --unfinished` does not take it for the recording's (a WAV whose sizes
    /// were never set, which it would have rewritten), nor does the next recording's notice.
    @Test func aRecordingKilledBeforeItsFirstAudioLeavesTheFileThereToItsOwner() throws {
        let rig = try ALSATestRig(input: Data())
        try Self.silentSource(rig)
        let wav = rig.path("stream.wav")
        // 16-bit stereo at 48 kHz, both sizes 0xFFFFFFFF (as a WAV written to a pipe has them).
        var header = Data("RIFF".utf8) + Data([0xFF, 0xFF, 0xFF, 0xFF]) + Data("WAVEfmt ".utf8)
        header += Data([16, 0, 0, 0, 1, 0, 2, 0, 0x80, 0xBB, 0, 0, 0x00, 0xEE, 0x02, 0, 4, 0, 16, 0])
        header += Data("data".utf8) + Data([0xFF, 0xFF, 0xFF, 0xFF]) + Data(count: 4_800)
        try header.write(to: URL(fileURLWithPath: wav))
        let recording = try startHark(["record", "-D", "vmic.monitor", "-o", wav], rig: rig)
        try rig.waitForLog(containing: "\"event\":\"started\"")  // capture runs
        recording.send(SIGKILL)
        _ = recording.wait(timeout: 10)
        #expect(try Data(contentsOf: URL(fileURLWithPath: wav)) == header, "the file there is as it was")
        let repaired = try RepairTools.repair(["--unfinished", "--write"], rig: rig)
        #expect(repaired.status == 0 && repaired.standardError.contains("no file of it to repair"), "\(repaired.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: wav)) == header, "repair left it alone: \(repaired.standardError)")
    }

    /// A file that cannot be named when its first audio comes (its folder removed meanwhile) fails
    /// its output, which says it was never named, while the other output records: 74, and the
    /// message says the others went on, not that a file was finalized.
    @Test func aFileThatCannotBeNamedAtItsFirstAudioFailsItsOutputAlone() throws {
        let rig = try ALSATestRig(input: Data())
        try Self.silentSource(rig)
        let folder = rig.path("gone"), lost = rig.path("gone/x.flac"), kept = rig.path("kept.wav")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let recording = try startHark(["record", "-D", "vmic.monitor", "-o", lost, "-o", kept], rig: rig)
        try rig.waitForLog(containing: "\"event\":\"started\"")  // capture runs
        try FileManager.default.removeItem(atPath: folder)  // empty: its file has no name yet
        let resumed = try runTool("pactl", ["suspend-sink", "vmic", "0"], environment: rig.environment)
        try #require(resumed.status == 0, "\(resumed.standardError)")
        try OutputGrowth.waitUntil(kept, exceeds: 48_000)
        recording.send(SIGINT)
        let result = recording.wait(timeout: TestLoad.seconds(30))
        #expect(result.status == 74, "\(result.standardError)")
        #expect(result.standardError.contains("nothing written to \(lost) (it could not be named; nothing there was replaced)"),
                "\(result.standardError)")
        #expect(result.errorLines.last?.hasPrefix("hark: output \(lost) failed: cannot create '\(lost)': ") == true
                    && result.errorLines.last?.hasSuffix("; the other outputs went on") == true, "\(result.standardError)")
        #expect(!FileManager.default.fileExists(atPath: folder))
        #expect(try WAVAndRawOutputTests.soxInfo(kept)["Duration"] != nil)
    }

    /// Stopped before any audio came: a library recording and a time-pattern name leave no file
    /// (each took its new name at the start) and exit 0; `hark list` lists nothing.
    @Test(arguments: [nil, "t-%Y%m%d-%H%M%S.opus"] as [String?])
    func aStopBeforeTheFirstAudioGivesBackTheNameItTook(_ pattern: String?) throws {
        let rig = try ALSATestRig(input: Data())
        try Self.silentSource(rig)
        #expect(try runHark(["permissions", "grant", "recordings"], rig: rig).status == 0)
        let folder = rig.path(pattern == nil ? "Recordings" : "takes")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let recording = try startHark(["record", "-D", "vmic.monitor"] + (pattern.map { ["-o", folder + "/" + $0] } ?? []), rig: rig)
        try rig.waitForLog(containing: "\"event\":\"started\"")  // capture runs
        #expect(Self.files(in: folder).count == 1, "the new name is taken at the start: \(Self.files(in: folder))")
        recording.send(SIGINT)
        let result = recording.wait(timeout: TestLoad.seconds(30))
        // 0, stopped; on a machine loaded enough to delay the signal by 5 s, 74: the source
        // delivered nothing for that long. Either way nothing may be left.
        #expect([0, 74].contains(result.status), "\(result.standardError)")
        #expect(result.standardError.contains("no audio came; nothing there was replaced"), "\(result.standardError)")
        #expect(Self.files(in: folder).isEmpty, "\(Self.files(in: folder))")
        if pattern == nil {
            let listed = try runHark(["list"], rig: rig)
            #expect(listed.status == 0 && listed.standardOutput.isEmpty, "\(listed.standardError)")
        }
    }
}
