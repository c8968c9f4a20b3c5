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
    static func timeslices(_ pid: pid_t) -> [String: Int] { schedstat(pid, field: 2) }

    /// Nanoseconds each thread of `pid` has run so far, by thread name.
    static func cpuNanoseconds(_ pid: pid_t) -> [String: Int] { schedstat(pid, field: 0) }

    /// One field of each thread's /proc/PID/task/TID/schedstat (0: nanoseconds on a CPU, 1:
    /// nanoseconds waiting for one, 2: timeslices), summed by thread name.
    private static func schedstat(_ pid: pid_t, field: Int) -> [String: Int] {
        var result: [String: Int] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            guard let name = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8),
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
                  let value = stat.split(separator: " ").dropFirst(field).first.flatMap({ Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
            else { continue }
            result[name.trimmingCharacters(in: .whitespacesAndNewlines), default: 0] += value
        }
        return result
    }

    /// A paced 15 s recording to `name` in a new rig (with `environment` added), running once its
    /// first FLAC audio is written; stderr is a file, so there is no status line. Keep the rig
    /// alive while the recording runs: its PulseAudio and files go with it.
    static func startQuietRecording(_ name: String, environment: [String: String] = [:])
        throws -> (rig: ALSATestRig, recording: RunningProcess, output: String) {
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        let signal = TestSignal(format: format, frames: 20 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        rig.extraEnvironment.merge(environment) { _, new in new }
        let output = rig.path(name)
        let recording = try startHark(["record", "-D", "pacedcap", "-d", "15", "-o", output], rig: rig)
        try OutputGrowth.waitForFLACAudio(output, seconds: 1)
        return (rig, recording, output)
    }

    /// Each thread's voluntary context switches so far (the times it went to sleep: its wake-ups,
    /// whatever else ran meanwhile) and involuntary ones (preempted while it ran), by thread name.
    static func contextSwitches(_ pid: pid_t) -> [String: (voluntary: Int, involuntary: Int)] {
        var result: [String: (voluntary: Int, involuntary: Int)] = [:]
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8) else { continue }
            func field(_ name: String) -> Int {
                status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                    .flatMap { Int($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)) } ?? 0
            }
            let name = status.split(separator: "\n").first { $0.hasPrefix("Name:") }
                .map { $0.dropFirst(5).trimmingCharacters(in: .whitespaces) } ?? task
            let previous = result[name] ?? (0, 0)
            result[name] = (previous.voluntary + field("voluntary_ctxt_switches"), previous.involuntary + field("nonvoluntary_ctxt_switches"))
        }
        return result
    }

    /// Each thread's timeslices over `microseconds` of `pid`'s life, and the seconds that took.
    static func timeslices(of pid: pid_t, over microseconds: useconds_t) -> (runs: [String: Int], seconds: Double) {
        let before = timeslices(pid)
        let start = Date()
        usleep(microseconds)
        let after = timeslices(pid)
        let names = Set(after.keys).union(before.keys)
        let runs = Dictionary(uniqueKeysWithValues: names.map { ($0, (after[$0] ?? 0) - (before[$0] ?? 0)) })
        return (runs, Date().timeIntervalSince(start))
    }

    /// Each thread's timeslices and context switches over `microseconds` of `pid`'s life, and
    /// seconds at least as long as either count's window: the clock starts before the first
    /// reading and stops after the last, so a test preempted between them does not count more
    /// wake-ups than its seconds allow. For upper bounds; a lower bound wants `timeslices(of:over:)`.
    static func activity(of pid: pid_t, over microseconds: useconds_t)
        -> (runs: [String: Int], sleeps: [String: Int], cpuSeconds: [String: Double], seconds: Double) {
        let start = Date()
        let switchesBefore = contextSwitches(pid)
        let cpuBefore = cpuNanoseconds(pid)
        let (runs, _) = timeslices(of: pid, over: microseconds)
        let cpuAfter = cpuNanoseconds(pid)
        let switchesAfter = contextSwitches(pid)
        let sleeps = Dictionary(uniqueKeysWithValues: switchesAfter.map { name, after in
            (name, after.voluntary - (switchesBefore[name]?.voluntary ?? 0))
        })
        let cpuSeconds = Dictionary(uniqueKeysWithValues: cpuAfter.map { name, after in
            (name, Double(after - (cpuBefore[name] ?? 0)) / 1e9)
        })
        return (runs, sleeps, cpuSeconds, Date().timeIntervalSince(start))
    }

    @Test func aQuietRecordingSleepsUntilSomethingHappens() throws {
        // The default period is 125 ms.
        let (rig, recording, _) = try Self.startQuietRecording("sleepy.flac")
        let (runs, sleeps, cpuSeconds, seconds) = Self.activity(of: recording.pid, over: 4_000_000)
        recording.send(SIGINT)
        // The rig (its PulseAudio, its files) must outlive the recording.
        let result = withExtendedLifetime(rig) { recording.wait(timeout: TestLoad.seconds(30)) }
        #expect(result.status == 0, "\(result.standardError)")
        let session = runs["hark"] ?? 0
        let encoder = runs["hark-encode"] ?? 0
        let encoderSleeps = sleeps["hark-encode"] ?? 0
        let (sessionCPU, encoderCPU, captureCPU) = (cpuSeconds["hark"] ?? 0, cpuSeconds["hark-encode"] ?? 0, cpuSeconds["hark-capture"] ?? 0)
        print("WakeUpTests: over \(String(format: "%.2f", seconds)) s the session thread ran \(session) times, the encoder thread \(encoder) (\(encoderSleeps) of them after a sleep); "
              + "on the CPU: session \(String(format: "%.4f", sessionCPU)) s, encoder \(String(format: "%.4f", encoderCPU)) s, capture \(String(format: "%.4f", captureCPU)) s")
        #expect(runs["hark-encode"] != nil && runs["hark-capture"] != nil, "the threads are named: \(runs)")
        // Nothing happened: at most one wake-up a second (the promise; here it is none).
        #expect(session <= Int(seconds.rounded(.up)), "session thread: \(session) timeslices in \(seconds) s")
        // A file is written in batches of half a second: the encoder thread goes to sleep twice a
        // second (its voluntary switches: under the AddressSanitizer suite it was also preempted,
        // 19 timeslices in 4 s). One more a second at most; two-period batches slept four times.
        #expect(encoderSleeps <= Int(seconds * 3), "encoder thread: \(encoderSleeps) sleeps in \(seconds) s (half-second batches)")
        // Few wake-ups could also be a thread that never sleeps: it would stay on the CPU (a third
        // of a core or more under load). Measured in a debug build: session 0, encoder 15 ms,
        // capture 4 ms in 4 s.
        #expect(sessionCPU <= 0.01 * seconds * TestLoad.slowdown, "session thread: \(sessionCPU) s on the CPU in \(seconds) s")
        #expect(encoderCPU <= 0.05 * seconds * TestLoad.slowdown, "encoder thread: \(encoderCPU) s on the CPU in \(seconds) s")
        #expect(captureCPU <= 0.05 * seconds * TestLoad.slowdown, "capture thread: \(captureCPU) s on the CPU in \(seconds) s")
    }

    /// Where inotify cannot be used, the session looks at the permission files twice a second
    /// instead (#16's fallback): its thread then does wake, and a revocation still stops the
    /// recording within a second. Debug builds take `HARK_DEBUG_NO_INOTIFY` to run that path.
    @Test func withoutInotifyTheSessionPollsAndARevocationStillStopsItWithinASecond() throws {
        let (rig, recording, output) = try Self.startQuietRecording("polled.flac", environment: ["HARK_DEBUG_NO_INOTIFY": "1"])
        let (runs, seconds) = Self.timeslices(of: recording.pid, over: 3_000_000)
        let session = runs["hark"] ?? 0
        print("WakeUpTests: without inotify, over \(String(format: "%.2f", seconds)) s the session thread ran \(session) times")
        // Polling twice a second: at least one look a second, whatever the load.
        #expect(session >= Int(seconds.rounded(.down)), "session thread: \(session) timeslices in \(seconds) s; is it polling?")

        try Self.expectResetStopsWithinASecond(rig, recording, output, "without inotify")
    }

    /// `hark permissions reset` stops `recording` with exit 77 and its line, the last sample
    /// recorded within a second of the reset, the file whole.
    static func expectResetStopsWithinASecond(_ rig: ALSATestRig, _ recording: RunningProcess, _ output: String, _ label: String) throws {
        #expect(try runHark(["permissions", "reset"], rig: rig).status == 0)
        let result = recording.wait(timeout: TestLoad.seconds(30))
        #expect(result.status == 77, "\(result.standardError)")
        #expect(result.errorLines.last == "hark: microphone access was revoked; the recording was stopped and finalized")
        let reaction = try revocationStopDelay(rig, output: output)
        print("WakeUpTests: \(label), the last sample was recorded \(reaction) s after the reset")
        #expect(reaction < 1, "the capture went on \(reaction) s after the reset")
        let decoded = try runTool("flac", ["-t", "-s", output])
        #expect(decoded.status == 0, "\(decoded.standardError)")
    }

    /// A user whose inotify watches are used up (ENOSPC; an IDE takes thousands) has inotify but
    /// no watch on the permission files: the session polls as without inotify, and a revocation
    /// stops a recording without a status line. Before, the watch quietly watched nothing and such
    /// a recording ran to the end of `-d` after a reset. Debug builds take
    /// `HARK_DEBUG_NO_INOTIFY_WATCHES_LEFT` to have every watch refused with ENOSPC (the limit is
    /// the system's: lowering it would fail the recorders of the tests running beside this one).
    @Test func withNoInotifyWatchesLeftARevocationStillStopsTheRecordingWithinASecond() throws {
        let (rig, recording, output) = try Self.startQuietRecording(
            "unwatched.flac", environment: ["HARK_DEBUG_NO_INOTIFY_WATCHES_LEFT": "1"])
        try Self.expectResetStopsWithinASecond(rig, recording, output, "with no inotify watch")
    }
}
