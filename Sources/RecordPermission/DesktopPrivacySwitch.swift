import CLinux
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The desktop's own microphone switch: GNOME's Settings › Privacy › Microphone, the GSettings key
/// `org.gnome.desktop.privacy disable-microphone`, read through GLib's GSettings library (so dconf,
/// GLib's keyfile backend, system defaults and locks all count as the desktop counts them).
///
/// GIO is not loaded into hark: the `hark-privacy-switch` helper, installed beside hark, reads the
/// key and reports every change on a pipe (its protocol is in its main.c). Loading GIO here would
/// add about 4.5 MiB to a recording's resident memory and start GLib's threads beside the real-time
/// ones. One helper serves the whole process; it is started on the first question, and a machine
/// with no compiled GSettings schemas at all never starts it.
///
/// Where the schema or key does not exist, or GIO is not installed, the switch is `.absent` and
/// nothing changes. When the helper cannot be found or does not answer, the switch is
/// `.unreadable`: it does not restrict (a broken install must not lock every user out), and
/// `hark permissions` says so. A helper that ends after it has answered (killed from outside, the
/// OOM killer) is started again, its last reading standing until the new one answers, at most
/// `maximumRestarts` times; then the switch is `.unreadable`, which the recording says.
public final class DesktopPrivacySwitch: Sendable {
    public enum Reading: Sendable, Equatable {
        /// The desktop forbids using the microphone.
        case microphoneOff
        case microphoneOn
        /// No such switch on this machine.
        case absent
        /// There may be a switch, but it could not be read (the reason says why).
        case unreadable(String)
    }

    /// The one reader every gate in this process shares.
    public static let shared = DesktopPrivacySwitch()

    /// Where a user turns the switch back on, for refusal lines.
    public static let settingsPlace = "the desktop's Settings › Privacy › Microphone (org.gnome.desktop.privacy disable-microphone)"

    /// How long the first reading may take: the helper loads GIO and the schemas. Generous, because a
    /// loaded machine (the test suite under sanitizers) can take seconds to start a process. A
    /// helper that has not answered by then is left running: the switch is `.unreadable` until it
    /// answers, and its reading counts from then on (an "off" then stops a recording).
    static let firstReadingTimeoutMilliseconds = 5000

    /// How many times a helper that ended after answering is started again. More would be a
    /// helper that cannot stay up (a broken GLib), spawning a process twice a second for good.
    static let maximumRestarts = 3

    private struct Helper {
        var process: pid_t = 0
        /// Read end of the helper's stdout (non-blocking).
        var readings: Int32 = -1
        /// Write end of the helper's stdin: held open while hark wants readings.
        var keepAlive: Int32 = -1
        var last: Reading?
        /// Helpers started again after one ended unexpectedly (kept across restarts).
        var restarts = 0
    }

    private let helper = Mutex(Helper())
    private let firstReadingTimeoutMilliseconds: Int
    /// The helper's program and arguments.
    private let helperCommand: [String]?
    private let schemasMayExist: @Sendable () -> Bool

    /// A reader of its own, for a program that wants one apart from `shared`; `helperPath` nil
    /// means the switch cannot be read. `schemasMayExist` is the cheap check that spares a machine
    /// without GSettings the helper.
    public convenience init(helperPath: String? = DesktopPrivacySwitch.locateHelper(),
                            schemasMayExist: @escaping @Sendable () -> Bool = DesktopPrivacySwitch.schemasMayExist) {
        self.init(helperCommand: helperPath.map { [$0] }, schemasMayExist: schemasMayExist)
    }

    /// The same with a command of any program that speaks the helper's protocol (tests give a
    /// shell one-liner: a script file written just before would race other threads' fork and exec
    /// into ETXTBSY).
    public convenience init(helperCommand: [String]?, schemasMayExist: @escaping @Sendable () -> Bool) {
        self.init(helperCommand: helperCommand, schemasMayExist: schemasMayExist,
                  firstReadingTimeoutMilliseconds: Self.firstReadingTimeoutMilliseconds)
    }

    /// The same with a shorter wait for the first reading (tests of a helper that answers late).
    init(helperCommand: [String]?, schemasMayExist: @escaping @Sendable () -> Bool, firstReadingTimeoutMilliseconds: Int) {
        precondition(helperCommand.map { !$0.isEmpty } ?? true, "a helper command names a program")
        self.firstReadingTimeoutMilliseconds = firstReadingTimeoutMilliseconds
        self.helperCommand = helperCommand
        self.schemasMayExist = schemasMayExist
    }

    deinit {
        helper.withLock { helper in
            if helper.readings >= 0 { stop(&helper, leaving: .absent) }
        }
    }

    /// The switch as it is now. The first call starts the helper and waits for its first reading;
    /// later calls only read what the helper wrote since (a non-blocking read), so the revocation
    /// watch can ask twice a second for the price of one system call.
    public func reading() -> Reading {
        helper.withLock { helper in
            startIfNeeded(&helper)
            if helper.readings >= 0 {
                if helper.last == nil { awaitFirstReading(&helper) }
                drain(&helper)
            }
            return helper.last!
        }
    }

    /// Starts the helper without waiting for it, so that loading GIO over there overlaps with
    /// what the caller does before its first `reading()` (about 10 ms here).
    public func prepare() {
        helper.withLock { startIfNeeded(&$0) }
    }

    /// Leaves either a reading in `last`, or a running helper.
    private func startIfNeeded(_ helper: inout Helper) {
        guard helper.last == nil, helper.readings < 0 else { return }
        guard schemasMayExist() else {
            helper.last = .absent
            return
        }
        guard let command = helperCommand else {
            helper.last = .unreadable("hark-privacy-switch is not installed beside hark")
            return
        }
        start(command, into: &helper)
    }

    /// The helper's pipe, readable when it has reported a change (`reading()` takes it), or nil
    /// when no helper runs. It closes when the helper ends, so ask again before each wait.
    public var changeDescriptor: Int32? {
        helper.withLock { $0.readings >= 0 ? $0.readings : nil }
    }

    /// True when the desktop's switch forbids the microphone.
    public var forbidsMicrophone: Bool { reading() == .microphoneOff }

    // MARK: The helper process

    private func start(_ command: [String], into helper: inout Helper) {
        let path = command[0]
        var output: [Int32] = [-1, -1]
        var input: [Int32] = [-1, -1]
        // pipe2(O_CLOEXEC) is not visible from Swift's Glibc module; fcntl right after is the same
        // unless another thread spawns a process in between, which would only hold a copy open.
        guard Self.closeOnExecPipe(&output) else {
            helper.last = .unreadable("cannot make a pipe: \(String(cString: strerror(errno)))")
            return
        }
        guard Self.closeOnExecPipe(&input) else {
            close(output[0]); close(output[1])
            helper.last = .unreadable("cannot make a pipe: \(String(cString: strerror(errno)))")
            return
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, output[1], STDOUT_FILENO)
        // GLib's warnings are not hark's one-line messages.
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        // Nothing else: the helper lives as long as the recording, and a copy of a descriptor its
        // parent did not mark close-on-exec (a pipe or socket the parent's own parent waits on to
        // close, as Foundation's `Process` does for each child) would keep that open as long. An
        // app embedding the gate, with its own children, was kept from seeing them exit (a hung
        // test run: PermissionSettingsTests' writers beside RecordPermissionTests' in-process gate).
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // hark blocks its stop signals; the helper must not inherit that. Its own process group
        // keeps a terminal's Ctrl-C from ending it before hark has finished with it.
        var emptySet = sigset_t()
        sigemptyset(&emptySet)
        posix_spawnattr_setsigmask(&attributes, &emptySet)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP))
        var process: pid_t = 0
        let arguments = command.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        let status = posix_spawn(&process, path, &actions, &attributes, arguments, environ)
        close(output[1])
        close(input[0])
        guard status == 0 else {
            close(output[0]); close(input[1])
            helper.last = .unreadable("cannot start \(path): \(String(cString: strerror(status)))")
            return
        }
        _ = fcntl(output[0], F_SETFL, fcntl(output[0], F_GETFL) | O_NONBLOCK)
        helper = Helper(process: process, readings: output[0], keepAlive: input[1], last: nil, restarts: helper.restarts)
    }

    private func awaitFirstReading(_ helper: inout Helper) {
        let deadline = Self.milliseconds() + firstReadingTimeoutMilliseconds
        while helper.last == nil, helper.readings >= 0 {
            var descriptor = pollfd(fd: helper.readings, events: Int16(POLLIN), revents: 0)
            let left = deadline - Self.milliseconds()
            guard left > 0 else {
                // Left running: until 2026-11-28 it was stopped, and an "off" it would have
                // reported a moment later was never seen.
                helper.last = .unreadable("hark-privacy-switch did not answer within \(firstReadingTimeoutMilliseconds) ms")
                return
            }
            if poll(&descriptor, 1, Int32(left)) < 0, errno != EINTR { break }
            drain(&helper)
        }
        if helper.last == nil { stop(&helper, leaving: .unreadable("hark-privacy-switch ended without a reading")) }
    }

    /// Takes every byte the helper wrote; the last one is the switch's state now.
    private func drain(_ helper: inout Helper) {
        guard helper.readings >= 0 else { return }
        var bytes = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(helper.readings, &bytes, bytes.count)
            if count > 0 {
                for byte in bytes[..<count] {
                    switch byte {
                    case UInt8(ascii: "1"): helper.last = .microphoneOff
                    case UInt8(ascii: "0"): helper.last = .microphoneOn
                    case UInt8(ascii: "x"): helper.last = .absent
                    default: break
                    }
                }
                continue
            }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN { return }
            // End of file: the helper is gone. It ends by itself only after reporting "absent";
            // one that ended before answering at all is broken, not worth starting again.
            switch helper.last {
            case nil: stop(&helper, leaving: .unreadable("hark-privacy-switch ended without a reading"))
            case .absent?, .unreadable?: stop(&helper, leaving: helper.last!)
            case .microphoneOn?, .microphoneOff?: restart(&helper)
            }
            return
        }
    }

    /// A helper that answered, then ended (killed from outside): without one, the switch turned
    /// off later would go unseen and the recording go on. The new helper reports the switch as it
    /// is when it starts, so a change made in between is seen; until then the last reading stands.
    private func restart(_ helper: inout Helper) {
        let lastReading = helper.last!
        let restarts = helper.restarts + 1
        stop(&helper, leaving: lastReading)
        guard restarts <= Self.maximumRestarts, let command = helperCommand else {
            helper.last = .unreadable("hark-privacy-switch ended \(restarts) times; it is not started again")
            return
        }
        helper.restarts = restarts
        start(command, into: &helper)
        if helper.readings >= 0 { helper.last = lastReading }
    }

    private func stop(_ helper: inout Helper, leaving reading: Reading) {
        if helper.readings >= 0 { close(helper.readings) }
        if helper.keepAlive >= 0 { close(helper.keepAlive) }  // the helper sees end-of-file and exits
        if helper.process > 0 {
            var status: Int32 = 0
            if waitpid(helper.process, &status, WNOHANG) == 0 {
                kill(helper.process, SIGTERM)
                _ = waitpid(helper.process, &status, 0)
            }
        }
        helper = Helper(process: 0, readings: -1, keepAlive: -1, last: reading, restarts: helper.restarts)
    }

    // MARK: Finding things

    /// The helper beside the running executable (a build directory), or in `../libexec/hark/`
    /// relative to it (an installed `bin/hark`).
    public static func locateHelper() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let executable = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let directory = String(executable[..<(executable.lastIndex(of: "/") ?? executable.startIndex)])
        for candidate in ["\(directory)/hark-privacy-switch", "\(directory)/../libexec/hark/hark-privacy-switch"]
        where access(candidate, X_OK) == 0 {
            return candidate
        }
        return nil
    }

    /// False only when no directory GSettings reads holds compiled schemas: then no schema, this one
    /// included, can exist, and no helper needs to start (servers without a desktop).
    public static func schemasMayExist() -> Bool {
        let home = PermissionLocations.environment("HOME") ?? ""
        var directories = (PermissionLocations.environment("GSETTINGS_SCHEMA_DIR") ?? "").split(separator: ":").map(String.init)
        let dataHome = PermissionLocations.absolute(PermissionLocations.environment("XDG_DATA_HOME")) ?? home + "/.local/share"
        let dataDirectories = PermissionLocations.environment("XDG_DATA_DIRS") ?? "/usr/local/share:/usr/share"
        for data in [dataHome] + dataDirectories.split(separator: ":").map(String.init) {
            directories.append(data + "/glib-2.0/schemas")
        }
        return directories.contains { access($0 + "/gschemas.compiled", R_OK) == 0 }
    }

    private static func closeOnExecPipe(_ ends: inout [Int32]) -> Bool {
        guard pipe(&ends) == 0 else { return false }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return true
    }

    private static func milliseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
    }
}
