import AudioFormat
import Foundation
import Testing

/// A private ALSA configuration for one test, in its own temp dir, giving real ALSA capture with no
/// sound card (DESIGN.md §6):
///
/// - `filecap`: the `file` plugin over the `null` PCM, returning the input file's bytes unpaced;
/// - `pacedcap`: the same plugin over the `pulse` PCM, returning them bit-exact at real-time pace
///   (needs `startPulseAudio()`);
/// - `mappedcap`, with `deviceChannelMap`: the `file` plugin over a `route` PCM that passes each
///   channel through and reports that ALSA channel map (`snd_pcm_get_chmap`), as a sound card's
///   driver does. Not the `null` PCM's own `chmap`: alsa-lib 1.2.8's null plugin never frees the
///   map it parsed (48 bytes a device, which LeakSanitizer reports).
///
/// The file plugin does not loop: past the end of its input it returns stale data, so inputs are
/// sized to the recording.
final class ALSATestRig {
    let directory: URL
    let inputFile: URL
    private(set) var pulse: PulseAudioServer?
    private(set) var pipeWire: PipeWireDesktop?
    /// Set on top of `environment` for every program the rig runs (hark, pactl, gsettings).
    var extraEnvironment: [String: String] = [:]

    /// With `grantMicrophone`, the rig's user has already allowed hark the microphone (with
    /// `hark permissions grant microphone`), so recordings run without a prompt.
    /// `extraConfiguration` is appended to the rig's ALSA configuration (more devices).
    init(input: Data, grantMicrophone: Bool = true, extraConfiguration: String = "", deviceChannelMap: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("hark-test-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        inputFile = directory.appendingPathComponent("input.raw")
        try input.write(to: inputFile)
        var configuration = """
            pcm.filecap { type file; slave.pcm "null"; file "/dev/null"; infile "\(inputFile.path)"; format "raw" }
            pcm.pacedcap { type file; slave.pcm "pulse"; file "/dev/null"; infile "\(inputFile.path)"; format "raw" }
            \(extraConfiguration)
            """
        if let deviceChannelMap {
            let channels = deviceChannelMap.split(separator: ",").count
            let identity = (0..<channels).map { "\($0).\($0) 1" }.joined(separator: "; ")
            configuration += """

                pcm.mappedroute { type route; slave { pcm "null"; channels \(channels) }; ttable { \(identity) }; chmap [ "\(deviceChannelMap)" ] }
                pcm.mappedcap { type file; slave.pcm "mappedroute"; file "/dev/null"; infile "\(inputFile.path)"; format "raw" }
                """
        }
        try configuration.write(to: directory.appendingPathComponent("asoundrc"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: runtimeDirectory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        if grantMicrophone {
            let granted = try runHark(["permissions", "grant", "microphone"], rig: self)
            guard granted.status == 0 else { throw TestRigError("cannot grant the microphone: \(granted.standardError)") }
        }
    }

    deinit {
        pulse?.stop()
        pipeWire?.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Appends `definitions` to the rig's ALSA configuration, for devices that need the rig's own
    /// paths (its server's socket) or are added after the rig is made.
    func appendConfiguration(_ definitions: String) throws {
        let configuration = try FileHandle(forWritingTo: directory.appendingPathComponent("asoundrc"))
        defer { try? configuration.close() }
        configuration.seekToEndOfFile()
        configuration.write(Data("\n\(definitions)\n".utf8))
    }

    /// ALSA's main configuration file for this rig (`dropPulseDefaultHook()`).
    private var mainConfiguration = "/usr/share/alsa/alsa.conf"

    /// From here on, ALSA reads a copy of its main configuration whose `conf.d` lacks alsa-plugins'
    /// `99-pulse.conf`, the hook that makes `default` the pulse plugin while a sound server runs
    /// (and that, run after the rig's own file, overrides its `default`): as on a system with
    /// pipewire-alsa alone (Fedora, Arch), where the rig's configuration can then make `default`
    /// PipeWire's plugin.
    func dropPulseDefaultHook() throws {
        let confD = directory.appendingPathComponent("conf.d")
        try FileManager.default.createDirectory(at: confD, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: "/etc/alsa/conf.d") where name.hasSuffix(".conf") && name != "99-pulse.conf" {
            try FileManager.default.createSymbolicLink(atPath: confD.appendingPathComponent(name).path,
                                                       withDestinationPath: "/etc/alsa/conf.d/" + name)
        }
        let system = try String(contentsOfFile: mainConfiguration, encoding: .utf8)
        guard system.contains("\"/etc/alsa/conf.d\"") else { throw TestRigError("alsa.conf does not load /etc/alsa/conf.d") }
        let copy = directory.appendingPathComponent("alsa.conf")
        try system.replacingOccurrences(of: "\"/etc/alsa/conf.d\"", with: "\"\(confD.path)\"")
            .write(to: copy, atomically: true, encoding: .utf8)
        mainConfiguration = copy.path
    }

    var runtimeDirectory: URL { directory.appendingPathComponent("run") }
    var systemDirectory: URL { directory.appendingPathComponent("etc") }
    var storeFile: String { directory.appendingPathComponent("config/hark/permissions/dev.hark.cli.json").path }
    var accessLogFile: String { directory.appendingPathComponent("state/hark/access-log.jsonl").path }

    /// The environment hark runs in: this rig's ALSA configuration, runtime dir and home.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["ALSA_CONFIG_PATH"] = mainConfiguration + ":" + directory.appendingPathComponent("asoundrc").path
        environment["XDG_RUNTIME_DIR"] = runtimeDirectory.path
        environment["HOME"] = directory.path
        environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        environment["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
        // Debug builds read the administrator's policy from here instead of /etc/hark.
        environment["HARK_SYSTEM_CONFIG_DIR"] = systemDirectory.path
        environment.removeValue(forKey: "PULSE_SERVER")
        environment.merge(extraEnvironment) { _, extra in extra }
        return environment
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Waits until the access log holds `text` (hark writes its start line once capture runs).
    func waitForLog(containing text: String) throws {
        let deadline = Date().addingTimeInterval(TestLoad.seconds(20))
        while Date() < deadline {
            if let log = try? String(contentsOfFile: accessLogFile, encoding: .utf8), log.contains(text) { return }
            usleep(20_000)
        }
        throw TestRigError("the access log never said \(text)")
    }

    /// Starts a private PulseAudio with a null sink for `pacedcap`. Stopped with the rig.
    func startPulseAudio() throws {
        pulse = try PulseAudioServer(runtimeDirectory: runtimeDirectory, home: directory, environment: environment)
    }

    /// Starts a private desktop stack instead (a session bus, PipeWire, WirePlumber,
    /// pipewire-pulse: `PipeWireDesktop`), which hark and the rig's tools then reach through the
    /// same runtime dir and bus. Stopped with the rig.
    func startPipeWireDesktop() throws {
        let desktop = try PipeWireDesktop(runtimeDirectory: runtimeDirectory, scratch: directory, environment: environment)
        pipeWire = desktop
        extraEnvironment["DBUS_SESSION_BUS_ADDRESS"] = desktop.busAddress
    }
}

/// A private PulseAudio server (null sink `vmic`, its monitor the default source), found by its
/// runtime dir and killed by PID, so tests never touch each other's servers. A quiet sine plays
/// into the sink (module-sine, inside the server): an idle null sink suspends, and its monitor
/// then takes a second or two to deliver the first audio, which made the start of paced
/// recordings unpredictable. The content does not matter: `pacedcap` replaces it with the input.
///
/// The server is warm when it is returned: a new capture stream gets its first audio within a
/// few tenths of a second, every time. A null sink renders in blocks as long as the lowest
/// latency any of its streams asks for, 2 s when none asks (the sine does not); a stream that
/// connects then waits for the running block to end: 0–2 s, by chance (measured 0.3–2.2 s). So a
/// loopback from the monitor into a second null sink asks for 200 ms for the server's whole life
/// (the sink then renders every ~67 ms, 0.3 % of a core), and suspending and resuming `vmic`
/// restarts its rendering in such a block instead of the 2 s one it began with. Measured: the
/// first 0.2 s `pacedcap` recording of a fresh server took 2.1–2.3 s before, 0.3–0.4 s after.
final class PulseAudioServer {
    private let pidFile: URL

    init(runtimeDirectory: URL, home: URL, environment: [String: String]) throws {
        pidFile = runtimeDirectory.appendingPathComponent("pulse/pid")
        let started = try runTool("pulseaudio", [
            "--daemonize=yes", "--exit-idle-time=-1", "--system=false", "-n",
            "--load=module-native-protocol-unix",
            "--load=module-null-sink sink_name=vmic rate=48000 channels=2",
            "--load=module-sine sink=vmic frequency=440",
            "--load=module-null-sink sink_name=keepwarm rate=48000 channels=2",
            "--load=module-loopback source=vmic.monitor sink=keepwarm latency_msec=200 source_dont_move=true sink_dont_move=true",
        ], environment: environment)
        guard started.status == 0 else {
            throw TestRigError("pulseaudio did not start: \(started.standardError)")
        }
        _ = try runTool("pactl", ["set-default-source", "vmic.monitor"], environment: environment)
        for suspended in ["1", "0"] {
            let step = try runTool("pactl", ["suspend-sink", "vmic", suspended], environment: environment)
            guard step.status == 0 else { throw TestRigError("pactl suspend-sink vmic \(suspended): \(step.standardError)") }
        }
    }

    var pid: pid_t? {
        (try? String(contentsOf: pidFile, encoding: .utf8))
            .flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// Kills the server (SIGKILL, as a vanished device looks), waits until it is dead (up to
    /// 10 s scaled by the load), and removes its PID file. Dead is enough: a zombie holds no
    /// socket. But the daemon is reparented to PID 1, which in a container may reap it late (here
    /// every 2 s) or never, and a new server that found the old PID file while that PID was still
    /// a zombie took the old server for running and refused to start ("Daemon startup failed").
    func stop() {
        guard let pid else { return }
        kill(pid, SIGKILL)
        func isDead() -> Bool {
            guard kill(pid, 0) == 0 else { return true }
            // /proc/PID/stat is "PID (comm) STATE …": Z is a zombie, X dead.
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            let state = stat.range(of: ") ", options: .backwards).map { stat[$0.upperBound...].prefix(1) } ?? ""
            return state == "Z" || state == "X"
        }
        let deadline = Date().addingTimeInterval(TestLoad.seconds(10))
        while !isDead(), Date() < deadline { usleep(20_000) }
        unlink(pidFile.path)
    }
}

struct TestRigError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension ALSATestRig {
    /// Runs `body` with a tmpfs of `size` (mount's syntax: "1m", "5m") mounted at a fresh
    /// directory in the rig, passing its path; unmounts it afterwards. Needs root.
    func withSmallDisk(size: String, _ body: (String) throws -> Void) throws {
        let mountPoint = path("small-disk")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try runTool("mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mount failed: \(mounted.standardError)")
        defer { _ = try? runTool("umount", [mountPoint]) }
        try body(mountPoint)
    }
}

/// Fills the file system at `mountPoint` (a `withSmallDisk` one) with a file named "filler",
/// until not one more page fits: the next write anywhere on it fails with ENOSPC.
func fillDisk(_ mountPoint: String) throws {
    // dd ends with an error at the full disk; that is the point.
    _ = try runTool("dd", ["if=/dev/zero", "of=\(mountPoint)/filler", "bs=4096"])
    var status = statvfs()
    try #require(statvfs(mountPoint, &status) == 0 && status.f_bavail == 0, "\(mountPoint) still has \(status.f_bavail) blocks free")
}
