import AudioFormat
import Foundation
import Testing

/// A stop signal at any moment gives exit 0 and a file that decodes to exactly the frames the
/// summary reports: before the first period, mid-recording, and during the final drain.
@Suite struct SignalRobustnessTests {
    static let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
    static let signals: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Delays in seconds: the first 50 ms (before the first period), and spread over the start of
    /// PulseAudio's stream and the recording; deterministic, so a failure can be rerun.
    static let delays: [Double] = [0.0, 0.01, 0.03, 0.05, 0.08, 0.12, 0.2, 0.3, 0.45, 0.6,
                                   0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.3, 2.6, 3.0]

    @Test(arguments: ["flac", "opus"])
    func twentyPacedRunsStopCleanlyAtAnyMoment(_ codec: String) throws {
        let signal = TestSignal(format: Self.format, frames: 8 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        var filesWritten = 0
        for (index, delay) in Self.delays.enumerated() {
            let output = rig.path("run-\(index).\(codec)")
            let recording = try startHark(["record", "-v", "-D", "pacedcap", "-o", output], rig: rig)
            try waitUntilStopSignalsAreBlocked(recording)
            usleep(useconds_t(delay * 1_000_000))
            recording.send(Self.signals[index % Self.signals.count])
            let result = recording.wait(timeout: TestLoad.seconds(15))
            #expect(result.status == 0, "run \(index) after \(delay) s: \(result.standardError)")
            try expectFinished(output, codec: codec, result: result, signal: signal, run: "run \(index) after \(delay) s")
            if FileManager.default.fileExists(atPath: output) { filesWritten += 1 }
        }
        // The later stops come seconds into a paced recording: some runs must have audio to check.
        #expect(filesWritten > 0, "no run of \(Self.delays.count) wrote a file")
    }

    @Test(arguments: ["flac", "opus"])
    func signalsDuringTheDrainOfAnUnpacedRecording(_ codec: String) throws {
        // Unpaced, the capture thread runs ahead until the ring is full and then waits for the
        // encoder, so after a stop a few seconds of audio are still being drained.
        let signal = TestSignal(format: Self.format, frames: 30 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        var largestDrain = 0
        defer { #expect(largestDrain > 48_000, "the later stops came with seconds of audio in flight") }
        let delays = [0.02, 0.05, 0.1, 0.15, 0.25]
        let lastRun = delays.count - 1
        for (index, delay) in delays.enumerated() {
            let output = rig.path("drain-\(index).\(codec)")
            let recording = try startHark(["record", "-v", "-D", "filecap", "-d", "30", "--compression-level", "8",
                                           "-o", output].filter { codec == "flac" || !$0.hasPrefix("--compression") && $0 != "8" },
                                          rig: rig)
            try waitUntilStopSignalsAreBlocked(recording)
            if index == lastRun {
                // The last stop comes once about 3 s of audio are encoded (the ring is full long before):
                // on a loaded machine, or under a sanitizer, 0.25 s may not even reach the device.
                if codec == "flac" {
                    try OutputGrowth.waitForFLACAudio(output, seconds: 3, timeout: TestLoad.seconds(30))
                } else {
                    try OutputGrowth.waitForOpusAudio(output, seconds: 3, timeout: TestLoad.seconds(30))
                }
            } else {
                usleep(useconds_t(delay * 1_000_000))
            }
            recording.send(SIGINT)
            usleep(5_000)
            recording.send(SIGINT)  // a second Ctrl-C while draining
            let result = recording.wait(timeout: TestLoad.seconds(30))
            #expect(result.status == 0, "\(result.standardError)")
            // Everything the capture thread put into the (full) ring reached the file, and the
            // summary counts it (expectFinished; none, and no file, before the first audio).
            try expectFinished(output, codec: codec, result: result, signal: signal, run: "drain run \(index)")
            if let drained = result.standardError.firstMatch(of: /ring drained: \d+ frames captured, (\d+) encoded/) {
                largestDrain = max(largestDrain, Int(drained.1)!)
            }
        }
    }

    /// A stop signal hark was started with ignored stays ignored: under `nohup` (SIGHUP) or as a
    /// script's background job (SIGINT and SIGQUIT), a recording goes on when its terminal closes or
    /// the script's foreground is interrupted, and SIGTERM, not ignored, still stops it. Standard
    /// signals pending together are taken lowest first, so had the ignored three been queued (as
    /// they were until 2026-11-29, hark blocking them: `nohup hark record` ended with its
    /// terminal), SIGHUP would have been the one that stopped it.
    @Test func stopSignalsIgnoredAtTheStartStayIgnored() throws {
        let signal = TestSignal(format: Self.format, frames: 8 * 48_000)
        let rig = try ALSATestRig(input: signal.alsaBytes)
        try rig.startPulseAudio()
        let output = rig.path("nohup.flac")
        // Started as nohup and a non-interactive shell's `&` start a program: nothing blocked,
        // SIGHUP, SIGINT and SIGQUIT ignored.
        let start = """
            import os, signal, sys
            signal.pthread_sigmask(signal.SIG_SETMASK, set())
            for s in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT):
                signal.signal(s, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.execv(sys.argv[1], sys.argv[1:])
            """
        let recording = try RunningProcess(URL(fileURLWithPath: findOnPath("python3") ?? "/usr/bin/python3"),
                                           ["-c", start, harkBinary.path, "record", "-v", "-D", "pacedcap", "-o", output],
                                           environment: rig.environment, scratch: rig.directory)
        try waitUntilStopSignalsAreBlocked(recording, signal: SIGTERM)
        // Mid-recording: the file is named with the first audio.
        let deadline = Date().addingTimeInterval(TestLoad.seconds(15))
        while !FileManager.default.fileExists(atPath: output) && recording.process.isRunning && Date() < deadline { usleep(10_000) }
        let status = try String(contentsOfFile: "/proc/\(recording.pid)/status", encoding: .utf8)
        let ignoredMask = status.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }.flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
        for ignored in [SIGHUP, SIGINT, SIGQUIT] {
            #expect((ignoredMask ?? 0) & (1 << UInt64(ignored - 1)) != 0, "signal \(ignored) is no longer ignored: \(ignoredMask ?? 0)")
            recording.send(ignored)
        }
        recording.send(SIGTERM)
        let result = recording.wait(timeout: TestLoad.seconds(30))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("stopped by SIGTERM"), "\(result.standardError)")
        try expectFinished(output, codec: "flac", result: result, signal: signal, run: "ignored signals")
    }

    private func expectFinished(_ output: String, codec: String, result: ToolResult, signal: TestSignal, run: String) throws {
        // Every frame the capture thread took reached the encoder (hark -v says both).
        let drained = try #require(result.standardError.firstMatch(of: /ring drained: (\d+) frames captured, (\d+) encoded/),
                                   "\(run): \(result.standardError)")
        #expect(Int(drained.1)! == Int(drained.2)!, "\(run): \(drained.0)")
        // Stopped before its first audio (the earliest stops): a file is named only with its
        // first audio, so there is none, and nothing was captured (not captured and lost).
        if result.standardError.contains("nothing written to \(output) (no audio came") {
            #expect(!FileManager.default.fileExists(atPath: output), "\(run): \(result.standardError)")
            #expect(Int(drained.1)! == 0, "\(run): \(drained.0), yet nothing written")
            return
        }
        let frames = try #require(summaryFrames(result.standardError), "\(run): no summary in \(result.standardError)")
        #expect(frames == Int(drained.2)!, "\(run): the summary's frames against \(drained.0)")
        if codec == "flac" {
            #expect(try FLACTools.test(output).status == 0, "\(run)")
            #expect(try FLACTools.totalSamples(output) == frames, "\(run)")
            let decoded = try FLACTools.decode(output, bitsPerSample: 16)
            expectSameElements(decoded[...], signal.prefix(frames: frames), "\(run)")
        } else {
            let info = try OpusTools.info(output)
            #expect(info.isClean, "\(run): \(info.text)")
            let pages = OggPage.pages(of: try Data(contentsOf: URL(fileURLWithPath: output)))
            #expect(pages.last?.isEndOfStream == true, "\(run)")
            #expect(try OpusTools.decode(output).samples.count / 2 == frames, "\(run)")
        }
    }
}

/// The frame count in hark's summary line ("recorded 1.250 s, 60000 frames, …").
func summaryFrames(_ standardError: String) -> Int? {
    guard let range = standardError.range(of: #"recorded [0-9.]+ s, ([0-9]+) frames?"#, options: .regularExpression) else { return nil }
    let words = standardError[range].split(separator: " ")
    return Int(words[3])
}

/// Waits until `recording` has blocked SIGINT (or `signal`), which hark does first thing in `main`, and requires
/// that it did so, alive, within `timeout` seconds (a slow start under load or a sanitizer is not
/// a failure; a hark that never blocks the stop signals, or dies first, is).
/// Before that, while the dynamic loader and the Swift runtime start, a signal has its default
/// effect on hark as on any program; the first 50 ms are counted from here.
func waitUntilStopSignalsAreBlocked(_ recording: RunningProcess, signal: Int32 = SIGINT, timeout: Double = TestLoad.seconds(10),
                                    sourceLocation: SourceLocation = #_sourceLocation) throws {
    let deadline = Date().addingTimeInterval(timeout)
    var blocked = false
    while !blocked && recording.process.isRunning && Date() < deadline {
        if let status = try? String(contentsOfFile: "/proc/\(recording.pid)/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
           let mask = UInt64(line.split(separator: "\t").last ?? "", radix: 16), mask & (1 << (UInt64(signal) - 1)) != 0 {
            blocked = true
        } else {
            usleep(1_000)
        }
    }
    try #require(blocked, "hark did not block signal \(signal) within \(timeout) s", sourceLocation: sourceLocation)
    try #require(recording.process.isRunning, "hark exited before it was signalled", sourceLocation: sourceLocation)
}
