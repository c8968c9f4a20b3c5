import AudioFormat
import Benchmark
import Capture
import Encoding
import Foundation
import RecordPermission
import Recorder
import SignalGenerator
#if canImport(Glibc)
import Glibc
#endif

/// A whole recording: 60 s of 48 kHz stereo music-like signal through ALSA's file plugin
/// (unpaced), capture thread → ring → encoder thread → FLAC file, per iteration.
private final class SessionState: @unchecked Sendable {
    let directory: String
    let gate: PermissionGate

    init() throws {
        directory = try makeBenchmarkDirectory("hark-bench")
        sessionDirectory = directory
        atexit { sessionDirectory.map(removeBenchmarkDirectory) }
        let format = PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)
        let samples = MusicLikeSignal.samples(frames: 60 * 48_000, channels: 2, sampleRate: format.sampleRate, bits: 16)
        try Self.write(MusicLikeSignal.alsaBytes(samples, format: .s16LE), to: directory + "/input.raw")
        let configuration = """
            pcm.filecap { type file; slave.pcm "null"; file "/dev/null"; infile "\(directory)/input.raw"; format "raw" }

            """
        try Self.write(Array(configuration.utf8), to: directory + "/asoundrc")
        // Before ALSA reads its configuration for the first time in this process.
        setenv("ALSA_CONFIG_PATH", "/usr/share/alsa/alsa.conf:\(directory)/asoundrc", 1)
        let locations = benchmarkLocations(in: directory)
        gate = PermissionGate(manifest: AppManifest(appIdentifier: "dev.hark.benchmarks", displayName: "hark benchmarks",
                                                    microphoneUsageDescription: "The benchmarks record a generated signal."),
                              locations: locations)
        try gate.setDecision(.authorized, for: .microphone)
        StopSignals.block()
    }

    /// A session with no end, started and left running: the steady-state benchmark's subject.
    /// Each output is (codec, file name).
    ///
    /// Its rings hold 20 s, not the default 2.5 s. The capture loop takes a source whose rings are
    /// full and that is no further ahead of the wall clock than a device buffer for a live one,
    /// and drops a period rather than let it overrun. This source is unpaced: once the encoder has
    /// run a moment it is minutes ahead, but at the start it is ahead by what the rings hold, so
    /// an encoder thread held up at its start for about 2 s (a loaded machine: `scripts/test` runs
    /// this beside the AddressSanitizer suite) would drop a period and fail the teardown's check.
    /// 20 s of lead asks for a stall no machine gives.
    func startEndless(_ outputs: [(CodecSettings, String)], soundActivation: SoundActivation? = nil) throws -> RecordingSession {
        let configuration = RecordingConfiguration(
            capture: CaptureRequest(device: "filecap", format: PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)),
            outputs: outputs.map { OutputConfiguration(destination: .file(path: directory + "/" + $0.1), codec: $0.0) },
            durationSeconds: nil, ringSeconds: 20, soundActivation: soundActivation)
        let session = try RecordingSession(configuration) { gate.requestAccess(for: .audio, prompt: NoPrompt()) }
        _ = try session.start()
        return session
    }

    func record(_ codec: CodecSettings, to name: String) throws -> RecordingSummary {
        let configuration = RecordingConfiguration(
            capture: CaptureRequest(device: "filecap", format: PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000)),
            output: .file(path: directory + "/" + name), codec: codec, durationSeconds: 60)
        let session = try RecordingSession(configuration) { gate.requestAccess(for: .audio, prompt: NoPrompt()) }
        _ = try session.start()
        return session.waitUntilFinished()
    }

    private static func write(_ bytes: [UInt8], to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0, bytes.withUnsafeBytes({ Glibc.write(descriptor, $0.baseAddress!, $0.count) }) == bytes.count else {
            throw BenchmarkSetupError("cannot write \(path)")
        }
        close(descriptor)
    }
}

private struct NoPrompt: ConsentPrompting {
    func ask(appName: String, resource: PermissionResource, purpose: String) -> PromptAnswer? { nil }
}

struct BenchmarkSetupError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A new directory under /tmp for a benchmark's files.
func makeBenchmarkDirectory(_ prefix: String) throws -> String {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw BenchmarkSetupError("mkdtemp failed") }
    return String(cString: made)
}

/// Stops the benchmark run with `message` when `condition` does not hold. Unlike `precondition`,
/// whose message an optimized build leaves out, this says what went wrong.
func expectInBenchmark(_ condition: Bool, _ message: @autoclosure () -> String) {
    guard condition else { fatalError(message()) }
}

/// Removes `path` and everything in it.
func removeBenchmarkDirectory(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

/// The session benchmarks' directory: they share it (and ALSA's configuration names the input in
/// it) for as long as the process runs, so it is removed when the process exits. It holds the
/// 60 s input and the recordings, 40–80 MB that every run used to leave in /tmp.
nonisolated(unsafe) private var sessionDirectory: String?

/// The permission store, access log and policy of a benchmark, all inside `directory`.
func benchmarkLocations(in directory: String) -> PermissionLocations {
    PermissionLocations(storeDirectory: directory + "/permissions", stateDirectory: directory + "/state",
                        systemDirectory: directory + "/etc")
}

func registerSessionBenchmark() {
    let state = SetupState<SessionState>()
    registerSteadyStateSessionBenchmarks(state)
    for (name, codec) in [("FLAC_level5", CodecSettings.flac(FLACSettings())),
                          ("Opus_128kbps", .opus(OpusSettings(bitrateKbps: 128)))] {
        Benchmark("Session_60s_unpaced_ALSA_file_plugin_to_\(name)",
                  configuration: .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident],
                                       warmupIterations: 1, maxDuration: .seconds(10), maxIterations: 10)) { benchmark in
            for _ in benchmark.scaledIterations {
                let summary = try! state.value!.record(codec, to: "session.\(name.hasPrefix("FLAC") ? "flac" : "opus")")
                expectInBenchmark(summary.frames == 60 * 48_000 && summary.end == .durationReached, "session failed: \(summary)")
            }
        } setup: {
            if state.value == nil { state.value = try SessionState() }
        }
    }
}

/// The capture thread and the encoder thread at work, measured from outside: a session without an
/// end runs in the background (started in setup, unpaced through the file plugin; once the input
/// file ends, the file plugin passes on the null device's silence, still through every stage), and
/// each iteration waits while one second of audio goes device → ring → encoder → file. Whatever
/// those threads allocate meanwhile is counted (jemalloc's statistics are process-wide), so the
/// malloc threshold of 0 covers the real loops — `CaptureLoop`, `EncoderLoop`, the encoders and the
/// output — not just their parts. The waiting thread only sleeps and reads an atomic.
private func registerSteadyStateSessionBenchmarks(_ state: SetupState<SessionState>) {
    let running = SetupState<RecordingSession>()
    let flac = CodecSettings.flac(FLACSettings()), opus = CodecSettings.opus(OpusSettings(bitrateKbps: 128))
    // The last runs two outputs from one capture: the capture thread's copy into the second ring
    // and the second encoder thread are counted too.
    for (name, outputs) in [("FLAC_level5", [(flac, "steady.flac")]), ("Opus_128kbps", [(opus, "steady.opus")]),
                            ("FLAC_level5_and_Opus_128kbps_two_outputs", [(flac, "both.flac"), (opus, "both.opus")])] {
        Benchmark("Session_steady_state_capture_ring_encode_write_1s_\(name)",
                  configuration: HotPath.configuration) { benchmark in
            waitSecondByFrames(running.value!, iterations: benchmark.scaledIterations)
        } setup: {
            if state.value == nil { state.value = try SessionState() }
            let session = try state.value!.startEndless(outputs)
            // Past the first writes (libopusenc makes its buffers then) before anything is measured:
            // 5 s captured beyond what the rings hold have been encoded.
            while session.framesCaptured < session.ringCapacityFrames + 5 * 48_000 { usleep(1_000) }
            running.value = session
        } teardown: {
            let summary = running.value!.waitUntilFinished { _ in .signal("teardown") }
            expectInBenchmark(summary.framesDropped == 0 && summary.end == .signal("teardown"), "steady session failed: \(summary)")
            running.value = nil
        }
    }
    // Sound-activated and waiting: the input's 60 s of music make one segment, the null device's
    // silence after it ends the segment a second later (--split-on-silence 1), and from then on
    // the encoder thread measures levels, holds its pre-roll and releases older frames, encoding
    // and writing nothing. Segments starting and ending allocate (a file); waiting must not.
    Benchmark("Session_steady_state_armed_silent_capture_ring_level_gate_1s_FLAC_level5", configuration: HotPath.configuration) { benchmark in
        waitSecondByFrames(running.value!, iterations: benchmark.scaledIterations)
    } setup: {
        if state.value == nil { state.value = try SessionState() }
        let session = try state.value!.startEndless([(flac, "armed.flac")],
                                                    soundActivation: SoundActivation(startAboveDBFS: -40, splitOnSilenceSeconds: 1))
        while session.framesCaptured < session.ringCapacityFrames + 64 * 48_000 { usleep(1_000) }
        running.value = session
    } teardown: {
        let summary = running.value!.waitUntilFinished { _ in .signal("teardown") }
        expectInBenchmark(summary.framesDropped == 0 && summary.outputs[0].segments == 1, "armed session failed: \(summary)")
        running.value = nil
    }
}

/// Each iteration waits, sleeping, while `session` captures one more second (48,000 frames).
private func waitSecondByFrames(_ session: RecordingSession, iterations: Range<Int>) {
    for _ in iterations {
        let target = session.framesCaptured + 48_000
        while session.framesCaptured < target { usleep(500) }
    }
}
