import AudioFormat
import Foundation
import Testing

/// CPU starvation: a 60 s paced recording while `stress-ng --cpu 2` keeps both cores busy. hark
/// must lose nothing it does not report: 0 overruns, or each one reported with the milliseconds
/// lost; frames in the file + frames reported dropped = the frames asked for; and every frame in
/// the file is the input's, bit for bit (the file plugin reads the input in order, so even time a
/// sound server dropped does not change the content).
///
/// A minute of loaded machine would slow every other test running beside it, so `scripts/test`
/// runs this suite on its own afterwards (HARK_STARVATION_TEST=1); in the main run it is skipped.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["HARK_STARVATION_TEST"] == "1",
                "runs alone after the main suite: scripts/test sets HARK_STARVATION_TEST=1"))
struct StarvationTests {
    static let seconds = 60

    @Test func aRecordingUnderFullCPULoadLosesNothingUnreported() throws {
        guard let stressNG = findOnPath("stress-ng") else {
            print("StarvationTests: skipped, stress-ng is not installed (scripts/install-deps installs it)")
            return
        }
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        let signal = TestSignal(format: format, frames: (Self.seconds + 10) * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let stress = Process()
        (stress.executableURL, stress.arguments) = withSignalsUnblocked(
            URL(fileURLWithPath: stressNG), ["--cpu", "2", "--timeout", "\(Self.seconds + 20)s", "--quiet"])
        try stress.run()
        defer { killWithWorkers(stress) }

        let output = rig.path("starved.flac")
        let result = try runHark(["record", "-D", "pacedcap", "-d", "\(Self.seconds)", "-o", output], rig: rig,
                                 timeout: Double(Self.seconds + 60))
        print("StarvationTests: \(result.wallSeconds) s: \(result.standardError)")
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try #require(result.standardError.firstMatch(of: /(\d+) frames?, .*; (\d+) overruns? \((\d+) ms lost\), (\d+) frames? dropped/),
                                   "\(result.standardError)")
        let (frames, overruns, lostMilliseconds, dropped) = (Int(summary.1)!, Int(summary.2)!, Int(summary.3)!, Int(summary.4)!)
        // Every overrun comes with the time it cost, and none is claimed without one.
        #expect((overruns == 0) == (lostMilliseconds == 0), "\(result.standardError)")
        #expect(frames + dropped == Self.seconds * 48_000, "\(result.standardError)")
        #expect(try FLACTools.totalSamples(output) == frames)
        let decoded = try FLACTools.decode(output, bitsPerSample: 16)
        if dropped == 0 {
            expectSameElements(decoded[...], signal.prefix(frames: frames))
        } else {
            expectInputInOrder(decoded, of: signal, dropped: dropped)
        }
    }
}

/// Kills stress-ng and its worker processes with SIGKILL: its own --timeout and SIGTERM would do,
/// now that it starts with signals unblocked, but a stuck load must never outlive the test.
private func killWithWorkers(_ process: Process) {
    let pid = process.processIdentifier
    let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
    for child in children.split(separator: " ").compactMap({ pid_t($0) }) { kill(child, SIGKILL) }
    kill(pid, SIGKILL)
    process.waitUntilExit()
}

