import AudioFormat
import Foundation
import Testing

/// A recorder that sleeps (#16): while a paced recording runs with no status line, the session's
/// thread does not wake at all unless something happens (a signal, a permission change, the
/// desktop switch), and the encoder thread of a file output wakes at most once per period. Counted
/// from the kernel's own figures for each thread (/proc/PID/task/TID/schedstat: the times it was
/// put on a CPU), over a few seconds in the middle of the recording.
@Suite struct WakeUpTests {
    /// Timeslices so far of each thread of `pid`, by thread name ("hark" is the main thread).
    static func timeslices(_ pid: pid_t) -> [String: Int] {
        var result: [String: Int] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8),
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
                  let slices = stat.split(separator: " ").dropFirst(2).first.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
            else { continue }
            result[name.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += slices
        }
        return result
    }

    @Test func aQuietRecordingSleepsUntilSomethingHappens() throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        let signal = TestSignal(format: format, frames: 20 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("sleepy.flac")
        // stderr is a file, so there is no status line; the default period is 125 ms.
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "15", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        let before = Self.timeslices(recording.pid)
        let start = Date()
        usleep(4_000_000)
        let after = Self.timeslices(recording.pid)
        let seconds = Date().timeIntervalSince(start)
        recording.send(SIGINT)
        let result = recording.wait(timeout: TestLoad.seconds(30))
        #expect(result.status == 0, "\(result.standardError)")
        let session = (after["hark"] ?? 0) - (before["hark"] ?? 0)
        let encoder = (after["hark-encode"] ?? 0) - (before["hark-encode"] ?? 0)
        print("WakeUpTests: over \(String(format: "%.2f", seconds)) s the session thread ran \(session) times, the encoder thread \(encoder)")
        #expect(before["hark-encode"] != nil && before["hark-capture"] != nil, "the threads are named: \(before)")
        // Nothing happened: at most one wake-up a second (the promise; here it is none).
        #expect(session <= Int(seconds.rounded(.up)), "session thread: \(session) timeslices in \(seconds) s")
        // A file is written in batches of two periods: at most one wake-up a period.
        #expect(encoder <= Int(seconds * 8), "encoder thread: \(encoder) timeslices in \(seconds) s (8 periods a second)")
    }

    /// Where inotify cannot be used, the session looks at the permission files twice a second
    /// instead (#16's fallback): its thread then does wake, and a revocation still stops the
    /// recording within a second. Debug builds take `HARK_DEBUG_NO_INOTIFY` to run that path.
    @Test func withoutInotifyTheSessionPollsAndARevocationStillStopsItWithinASecond() throws {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        let signal = TestSignal(format: format, frames: 20 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        rig.extraEnvironment["HARK_DEBUG_NO_INOTIFY"] = "1"
        let output = rig.path("polled.flac")
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "15", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        let before = Self.timeslices(recording.pid)
        let start = Date()
        usleep(3_000_000)
        let after = Self.timeslices(recording.pid)
        let seconds = Date().timeIntervalSince(start)
        let session = (after["hark"] ?? 0) - (before["hark"] ?? 0)
        print("WakeUpTests: without inotify, over \(String(format: "%.2f", seconds)) s the session thread ran \(session) times")
        // Polling twice a second: at least one look a second, whatever the load.
        #expect(session >= Int(seconds.rounded(.down)), "session thread: \(session) timeslices in \(seconds) s; is it polling?")

        #expect(try runHark(["permissions", "reset"], rig: rig).status == 0)
        let result = recording.wait(timeout: TestLoad.seconds(30))
        #expect(result.status == 77, "\(result.standardError)")
        #expect(result.errorLines.last == "hark: microphone access was revoked; the recording was stopped and finalized")
        // From the revocation stamp's change time to the output's last write, as AccessLogTests times it.
        var info = stat()
        let stamp = rig.directory.appendingPathComponent("config/hark/permissions/.dev.hark.cli.microphone.revoked").path
        #expect(stat(stamp, &info) == 0, "no revocation stamp at \(stamp)")
        let revoked = Double(info.st_ctim.tv_sec) + Double(info.st_ctim.tv_nsec) / 1e9
        #expect(stat(output, &info) == 0)
        let finished = Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
        let reaction = finished - revoked
        print("WakeUpTests: without inotify, the file was finished \(reaction) s after the reset")
        #expect(reaction < 1, "the file was finished \(reaction) s after the reset")
        let decoded = try runTool("flac", ["-t", "-s", output])
        #expect(decoded.status == 0, "\(decoded.standardError)")
    }
}
