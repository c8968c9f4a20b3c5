import AudioFormat
import Benchmark
import Capture
import Encoding
import Foundation
import RecordPermission
import Realtime
import Recorder
#if canImport(Glibc)
import Glibc
#endif

/// The path most users record through: the sound server's own record stream (libpulse, as for
/// `-D pulse`, a source's name or a desktop's `default`), paced in real time, into FLAC. The
/// file-plugin sessions (`SessionBenchmark`) never run `SoundServerCapture`: its read of each
/// fragment (`pa_stream_peek`/`drop`), the main-loop turn that takes in the server's packets, the
/// timing questions at its start. Here a private PulseAudio (its own runtime dir, killed at exit)
/// serves a null source, `benchmic` (paced silence, a microphone to the server; the server ends
/// itself 10 s after its last client, should this process die before it kills it), and a session
/// with no end records it; each iteration waits while a quarter of a second goes through, and
/// whatever the process allocates meanwhile (libpulse's share included, on hark's capture thread)
/// is counted.
private final class SoundServerSessionState: @unchecked Sendable {
    let directory: String
    private var serverPID: pid_t?
    private let gate: PermissionGate
    private static let environmentNames = ["XDG_RUNTIME_DIR", "HOME", "PULSE_RUNTIME_PATH", "PULSE_SERVER"]
    private var savedEnvironment: [String: String?] = [:]

    func restoreEnvironment() {
        for (name, value) in savedEnvironment {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }

    init() throws {
        directory = try makeBenchmarkDirectory("hark-bench-pulse")
        let runtime = directory + "/runtime"
        mkdir(runtime, 0o700)
        // Before libpulse is loaded: it finds the server, its cookie and its config by these. Put
        // back once the session's stream is up (`restoreEnvironment`), for the benchmarks after.
        for name in Self.environmentNames { savedEnvironment[name] = getenv(name).map { String(cString: $0) } }
        setenv("XDG_RUNTIME_DIR", runtime, 1)
        setenv("HOME", directory, 1)
        setenv("PULSE_RUNTIME_PATH", runtime + "/pulse", 1)
        unsetenv("PULSE_SERVER")
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/pulseaudio")
        server.arguments = ["--daemonize=yes", "--exit-idle-time=10", "--system=false", "-n",
                            "--load=module-native-protocol-unix",
                            "--load=module-null-source source_name=benchmic rate=48000 channels=2"]
        server.standardError = FileHandle.nullDevice
        server.standardOutput = FileHandle.nullDevice
        do { try server.run() } catch { throw BenchmarkSetupError("cannot start pulseaudio (scripts/install-deps installs it): \(error)") }
        server.waitUntilExit()
        guard server.terminationStatus == 0 else { throw BenchmarkSetupError("pulseaudio did not start (status \(server.terminationStatus))") }
        serverPID = (try? String(contentsOfFile: runtime + "/pulse/pid", encoding: .utf8))
            .flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        gate = PermissionGate(manifest: AppManifest(appIdentifier: "dev.hark.benchmarks", displayName: "hark benchmarks",
                                                        microphoneUsageDescription: "The benchmarks record a generated signal."),
                                  locations: benchmarkLocations(in: directory))
        soundServerState = self
        atexit { soundServerState?.stopServer() }
        try gate.setDecision(.authorized, for: .microphone)
        StopSignals.block()
    }

    /// A session with no end, recording `benchmic`, past its start.
    func startSession() throws -> RecordingSession {
        var request = CaptureRequest(device: "benchmic", format: PCMFormat(sampleFormat: .s16LE, channels: 2, sampleRate: 48_000))
        request.route = .soundServer(source: "benchmic")
        let configuration = RecordingConfiguration(
            capture: request,
            outputs: [OutputConfiguration(destination: .file(path: directory + "/pulse.flac"), codec: .flac(FLACSettings()))],
            durationSeconds: nil, ringSeconds: 20, soundActivation: nil)
        let session = try RecordingSession(configuration) { [gate] in gate.requestAccess(for: .audio, prompt: NoServerPrompt()) }
        _ = try session.start()
        // Past the stream's start (its first fragments, the timing questions, the encoder's first
        // writes) before anything is measured: two seconds recorded, within half a minute.
        let deadline = Date().addingTimeInterval(30)
        while session.framesCaptured < 2 * 48_000 {
            guard Date() < deadline else { throw BenchmarkSetupError("the sound server's stream brought no audio in 30 s") }
            usleep(10_000)
        }
        return session
    }

    func stopServer() {
        if let serverPID { kill(serverPID, SIGKILL) }
        serverPID = nil
        removeBenchmarkDirectory(directory)
    }
}

private struct NoServerPrompt: ConsentPrompting {
    func ask(appName: String, resource: PermissionResource, purpose: String) -> PromptAnswer? { nil }
}

nonisolated(unsafe) private var soundServerState: SoundServerSessionState?

func registerSoundServerSessionBenchmark() {
    let state = SetupState<SoundServerSessionState>()
    let running = SetupState<RecordingSession>()
    var configuration = HotPath.configuration
    // Paced: each iteration takes a quarter of a second of real time.
    configuration.maxDuration = .seconds(6)
    configuration.maxIterations = 20
    configuration.warmupIterations = 1
    Benchmark("Session_sound_server_steady_state_stream_ring_encode_write_250ms_FLAC_level5", configuration: configuration) { benchmark in
        let session = running.value!
        for _ in benchmark.scaledIterations {
            let target = session.framesCaptured + 12_000
            // The clock, not `Date`: this thread's allocations count too.
            let deadline = MonotonicClock.nanoseconds() + 30_000_000_000
            while session.framesCaptured < target {
                expectInBenchmark(MonotonicClock.nanoseconds() < deadline, "the sound server's stream stopped bringing audio")
                usleep(2_000)
            }
        }
    } setup: {
        if state.value == nil { state.value = try SoundServerSessionState() }
        running.value = try state.value!.startSession()
        state.value!.restoreEnvironment()
    } teardown: {
        let summary = running.value!.waitUntilFinished { _ in .signal("teardown") }
        expectInBenchmark(summary.framesDropped == 0 && summary.end == .signal("teardown"), "sound-server session failed: \(summary)")
        running.value = nil
    }
}
