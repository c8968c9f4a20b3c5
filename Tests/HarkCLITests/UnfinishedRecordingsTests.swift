import AudioFormat
import Foundation
import Testing

/// Recordings that never ended: the access log knows they started, `hark repair --unfinished`
/// lists and repairs them, and the next recording says once that one was left unfinished.
@Suite struct UnfinishedRecordingsTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)

    @Test func aKilledRecordingIsListedRepairedAndMentionedOnce() throws {
        let signal = TestSignal(format: Self.format, frames: 30 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let killed = rig.path("killed.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "30", "-o", killed], rig: rig)
        // While it runs, it is not unfinished: its recorder is alive.
        let deadline = Date().addingTimeInterval(30)
        while ((try? RepairTools.bytes(killed).count) ?? 0) < 40_000 && Date() < deadline { usleep(20_000) }
        let whileRunning = try RepairTools.repair(["--unfinished"], rig: rig)
        #expect(whileRunning.status == 0 && whileRunning.standardError.contains("no unfinished recordings"), "\(whileRunning.standardError)")
        recording.send(SIGKILL)
        _ = recording.wait(timeout: 10)

        let listed = try RepairTools.repair(["--unfinished"], rig: rig)
        #expect(listed.status == 2, "\(listed.standardError)")
        #expect(listed.errorLines.first?.contains("unfinished recording started") == true && listed.errorLines.first?.contains(killed) == true,
                "\(listed.standardError)")
        #expect(listed.errorLines.last?.contains("would repair (FLAC)") == true, "\(listed.standardError)")

        // The next recordings: the first says so, once.
        let next = try runHark(["record", "-D", "filecap", "-d", "0.2", "-o", rig.path("next.flac")], rig: rig)
        #expect(next.status == 0)
        #expect(next.standardError.contains("an earlier recording was left unfinished: \(killed)"), "\(next.standardError)")
        #expect(next.standardError.contains("hark repair --unfinished --write"))
        let later = try runHark(["record", "-D", "filecap", "-d", "0.2", "-o", rig.path("later.flac")], rig: rig)
        #expect(later.status == 0 && !later.standardError.contains("unfinished"), "\(later.standardError)")

        let repaired = try RepairTools.repair(["--unfinished", "--write"], rig: rig)
        #expect(repaired.status == 1, "\(repaired.standardError)")
        #expect(try FLACTools.test(killed).status == 0)
        let decoded = try FLACTools.decode(killed, bitsPerSample: 16)
        #expect(try FLACTools.totalSamples(killed) == decoded.count / 2)
        expectSameElements(decoded[...], signal.prefix(frames: decoded.count / 2))
        let afterwards = try RepairTools.repair(["--unfinished"], rig: rig)
        #expect(afterwards.status == 0 && afterwards.standardError.contains("no unfinished recordings"), "\(afterwards.standardError)")
        // The log's entries are as before: one per recording that ended.
        let entries = String(decoding: try runHark(["permissions", "log"], rig: rig).standardOutput, as: UTF8.self)
        #expect(entries.contains("next.flac") && entries.contains("later.flac") && !entries.contains("killed.flac"), "\(entries)")
    }

    /// A split recording killed in its third file (or a later one): the access log knows every file
    /// it started, so the one it was writing is found and repaired, and the finished ones are left.
    @Test func aKilledSplitRecordingsLastFileIsFound() throws {
        let signal = TestSignal(format: Self.format, frames: 30 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let first = rig.path("part.flac"), third = rig.path("part-3.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "30", "--max-file-time", "2", "-o", first], rig: rig)
        try OutputGrowth.waitForFLACAudio(third, seconds: 0.2)
        recording.send(SIGKILL)
        _ = recording.wait(timeout: 10)
        // Which part was being written is whatever the kill found: an encoder late under load may
        // have finished the third part and begun the fourth by then. It is the newest part there.
        let parts = [first] + (2...15).map { rig.path("part-\($0).flac") }.filter { FileManager.default.fileExists(atPath: $0) }
        let unfinished = try #require(parts.last)
        let listed = try RepairTools.repair(["--unfinished"], rig: rig)
        #expect(listed.status == 2, "\(listed.standardError)")
        #expect(listed.errorLines.first?.contains(parts.joined(separator: ", ")) == true, "\(listed.standardError)")
        #expect(listed.errorLines.contains { $0.contains("\(unfinished): would repair (FLAC)") }, "\(listed.standardError)")
        for finished in parts.dropLast() {
            #expect(listed.errorLines.contains { $0.contains("\(finished): nothing to do") }, "\(listed.standardError)")
        }
        let repaired = try RepairTools.repair(["--unfinished", "--write"], rig: rig)
        #expect(repaired.status == 1, "\(repaired.standardError)")
        #expect(try FLACTools.test(unfinished).status == 0)
    }

    /// Repairing a killed recording's damaged files by name closes it as `--unfinished --write`
    /// does, once every file of it that is still there is whole: the finished parts of a split and
    /// a raw output (nothing to repair) need not be named. The next recording's notice leaves out
    /// files that are gone.
    @Test func aRecordingRepairedByNameIsNotMentionedAgain() throws {
        let signal = TestSignal(format: Self.format, frames: 30 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let flac = rig.path("killed.flac"), wav = rig.path("killed.wav"), opus = rig.path("killed.opus"), raw = rig.path("killed.raw")
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "30", "-o", flac, "--max-file-time", "1",
                                       "-o", wav, "-o", opus, "-o", raw], rig: rig)
        try OutputGrowth.waitForFLACAudio(rig.path("killed-2.flac"), seconds: 0.3)
        try OutputGrowth.waitForOpusAudio(opus, seconds: 0.2)
        // Each file is named with its first audio, on its own encoder thread: all four are.
        try OutputGrowth.waitUntil(wav, exceeds: 0)
        try OutputGrowth.waitUntil(raw, exceeds: 0)
        recording.send(SIGKILL)
        _ = recording.wait(timeout: 10)
        let parts = [flac] + (2...40).map { rig.path("killed-\($0).flac") }.filter { FileManager.default.fileExists(atPath: $0) }
        let current = try #require(parts.last)

        // The FLAC part being written repaired by name (0 if the kill fell between two parts):
        // still unfinished, for the Opus file (killed, it has no end-of-stream page). The raw
        // output has nothing to repair. (The WAV may be whole: its sizes are rewritten every
        // second, and a kill right after that leaves nothing to repair.)
        #expect([0, 1].contains(try RepairTools.repair(["--write", current], rig: rig).status))
        let listed = try RepairTools.repair(["--unfinished"], rig: rig)
        #expect(listed.status == 2 && listed.standardError.contains("\(opus): would repair (Ogg Opus)"), "\(listed.standardError)")
        #expect(listed.standardError.contains("\(raw): nothing to do (not FLAC, Ogg Opus or WAV: raw samples"), "\(listed.standardError)")

        // The WAV deleted: the notice names the files still there, once.
        try FileManager.default.removeItem(atPath: wav)
        let next = try runHark(["record", "-D", "filecap", "-d", "0.2", "-o", rig.path("next.flac")], rig: rig)
        #expect(next.status == 0)
        // (The parts follow, as the log knows them: a kill in the instant a part began may leave it
        // on disk before its line reached the log.)
        #expect(next.standardError.contains("an earlier recording was left unfinished: \(flac), \(opus), \(raw), \(parts[1])"),
                "\(next.standardError)")
        #expect(!next.standardError.contains(wav), "\(next.standardError)")

        // The Opus file repaired by name (spelt another way) closes it: the finished parts and the
        // raw output are checked without a word.
        let repaired = try RepairTools.repair(["--write", rig.directory.path + "/./killed.opus"], rig: rig)
        #expect(repaired.status == 1 && repaired.errorLines.count == 1, "\(repaired.standardError)")
        #expect(try RepairTools.isClean(opus, codec: "opus"))
        let afterwards = try RepairTools.repair(["--unfinished"], rig: rig)
        #expect(afterwards.status == 0 && afterwards.standardError.contains("no unfinished recordings"), "\(afterwards.standardError)")

        // A recording whose every file is gone is not mentioned at all.
        let gone = rig.path("gone.flac")
        let second = try startHark(["record", "-D", "pacedcap", "-d", "30", "-o", gone], rig: rig)
        try OutputGrowth.waitForFLACAudio(gone, seconds: 0.2)
        second.send(SIGKILL)
        _ = second.wait(timeout: 10)
        try FileManager.default.removeItem(atPath: gone)
        let last = try runHark(["record", "-D", "filecap", "-d", "0.2", "-o", rig.path("last.flac")], rig: rig)
        #expect(last.status == 0 && !last.standardError.contains("unfinished"), "\(last.standardError)")
    }

    @Test func usageErrorsOfUnfinished() throws {
        let rig = try ALSATestRig(input: Data())
        #expect(try RepairTools.repair(["--unfinished", rig.path("a.flac")], rig: rig).status == 64)
        #expect(try RepairTools.repair([], rig: rig).status == 64)
        let none = try RepairTools.repair(["--unfinished"], rig: rig)
        #expect(none.status == 0 && none.errorLines == ["hark: no unfinished recordings: every recording the access log knows of ended"])
    }
}
