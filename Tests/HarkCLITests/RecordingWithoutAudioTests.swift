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

    /// Waits until hark has written its start line: capture runs.
    static func waitUntilCaptureRuns(_ rig: ALSATestRig) throws {
        let deadline = Date().addingTimeInterval(TestLoad.seconds(20))
        while Date() < deadline {
            if let log = try? String(contentsOfFile: rig.accessLogFile, encoding: .utf8), log.contains("\"event\":\"started\"") { return }
            usleep(20_000)
        }
        throw TestRigError("hark never wrote its start line")
    }

    /// Nothing comes for 5 s: the device is lost (74), and the FLAC file and the raw file there
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
        #expect(result.errorLines.last == "hark: capture device lost: the device stopped delivering audio", "\(result.standardError)")
        for path in [flac, raw] {
            #expect(result.standardError.contains("nothing written to \(path) (no audio came; a file there is as it was)"), "\(result.standardError)")
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "an earlier take", "\(path)")
        }
        #expect(Self.files(in: folder) == ["keep.flac", "keep.raw"])
        let log = String(decoding: try runHark(["permissions", "log"], rig: rig).standardOutput, as: UTF8.self)
        #expect(log.contains("→ (nothing recorded)  0 s (0 frames") && log.contains("ended: device lost"), "\(log)")
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
        try Self.waitUntilCaptureRuns(rig)
        #expect(Self.files(in: folder).count == 1, "the new name is taken at the start: \(Self.files(in: folder))")
        recording.send(SIGINT)
        let result = recording.wait(timeout: TestLoad.seconds(30))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("no audio came; a file there is as it was"), "\(result.standardError)")
        #expect(Self.files(in: folder).isEmpty, "\(Self.files(in: folder))")
        if pattern == nil {
            let listed = try runHark(["list"], rig: rig)
            #expect(listed.status == 0 && listed.standardOutput.isEmpty, "\(listed.standardError)")
        }
    }
}
