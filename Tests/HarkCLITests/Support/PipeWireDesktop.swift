import Foundation

/// A private desktop audio stack as GNOME runs it on Debian 12 and current Ubuntu: a D-Bus session
/// bus, PipeWire, its session manager WirePlumber (which links a record stream to its source) and
/// pipewire-pulse (PipeWire's PulseAudio protocol, which hark's libpulse speaks). All of it lives in
/// one rig's runtime dir, so tests never reach each other's servers, and is killed by PID with the
/// rig. dconf, GSettings' desktop backend, is started by the bus when first asked, as on a desktop.
///
/// No sound card is needed: PipeWire finds none, and the tests add what pipewire-pulse's modules
/// make (a null sink and its monitor, a FIFO-fed microphone), as on PulseAudio.
final class PipeWireDesktop {
    /// The programs the stack needs (scripts/install-deps installs them).
    static let programs = ["dbus-daemon", "pipewire", "wireplumber", "pipewire-pulse"]
    static var isInstalled: Bool { programs.allSatisfy { findOnPath($0) != nil } }

    /// The session bus's address, for `DBUS_SESSION_BUS_ADDRESS`.
    let busAddress: String
    /// Started in order; stopped in the reverse order.
    private var daemons: [Daemon] = []

    /// Starts the stack and returns once pipewire-pulse answers and WirePlumber is connected to
    /// PipeWire (up to 20 s, scaled by the load). `environment` is the rig's.
    init(runtimeDirectory: URL, scratch: URL, environment: [String: String]) throws {
        let bus = runtimeDirectory.appendingPathComponent("bus")
        busAddress = "unix:path=" + bus.path
        var environment = environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        // PipeWire and WirePlumber would try X11 for the bus and for their portal otherwise.
        environment.removeValue(forKey: "DISPLAY")
        do {
            try start("dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=" + busAddress],
                      environment: environment, scratch: scratch)
            try waitUntil("the session bus's socket") { FileManager.default.fileExists(atPath: bus.path) }
            try start("pipewire", [], environment: environment, scratch: scratch)
            let socket = runtimeDirectory.appendingPathComponent("pipewire-0").path
            try waitUntil("PipeWire's socket") { FileManager.default.fileExists(atPath: socket) }
            try start("wireplumber", [], environment: environment, scratch: scratch)
            // pipewire-pulse 0.3.65 makes $XDG_RUNTIME_DIR/pulse with stat, then mkdir, and exits
            // ("mkdir() … failed: File exists") when another process makes it in between, as every
            // libpulse client does when it starts: the first `pactl` below did so once under load.
            // Made here first, nobody races to make it.
            try FileManager.default.createDirectory(at: runtimeDirectory.appendingPathComponent("pulse"),
                                                    withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try start("pipewire-pulse", [], environment: environment, scratch: scratch)
            // pipewire-pulse lists PipeWire's clients, WirePlumber among them once it is connected.
            try waitUntil("pipewire-pulse to answer with WirePlumber connected") {
                let clients = try runTool("pactl", ["list", "clients"], environment: environment, timeout: 10)
                return clients.status == 0 && String(decoding: clients.standardOutput, as: UTF8.self).contains("\"WirePlumber\"")
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    private func start(_ name: String, _ arguments: [String], environment: [String: String], scratch: URL) throws {
        guard let path = findOnPath(name) else { throw TestRigError("\(name) is not installed (run scripts/install-deps)") }
        daemons.append(try Daemon(name, executable: path, arguments: arguments, environment: environment,
                                  logFile: scratch.appendingPathComponent("\(name).log").path))
    }

    /// Polls `condition` every 50 ms; throws, with what each daemon said on stderr, when it is not
    /// met within 20 s (scaled by the load) or a daemon has exited.
    private func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(TestLoad.seconds(20))
        while Date() < deadline {
            if try condition() { return }
            if let ended = daemons.first(where: { !$0.isRunning }) {
                throw TestRigError("\(ended.name) exited while waiting for \(what): \(stopAndDescribe())")
            }
            usleep(50_000)
        }
        throw TestRigError("no \(what) within \(TestLoad.seconds(20)) s: \(stopAndDescribe())")
    }

    /// Stops the stack and says what each daemon wrote last.
    private func stopAndDescribe() -> String {
        let stopped = daemons
        stop()
        return stopped.map { "\($0.name): \($0.logTail)" }.joined(separator: "; ")
    }

    /// Kills every daemon (SIGKILL, as a crash), last started first, and reaps each. Idempotent.
    func stop() {
        daemons.reversed().forEach { $0.stop() }
        daemons.removeAll()
    }

    /// Kills one daemon alone (pipewire-pulse: the sound server going away, as hark sees it).
    func stopDaemon(_ name: String) {
        daemons.first { $0.name == name }?.stop()
    }
}
