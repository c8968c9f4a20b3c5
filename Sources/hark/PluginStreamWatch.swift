import Realtime
import RecordPermission
import SoundServer
#if canImport(Glibc)
import Glibc
#endif

/// Keeps a recording through ALSA's sound-server plugin on the kind of source it was allowed.
///
/// An ALSA definition of the user's that leads to the server's plugin (`pcm.mic { type pulse;
/// device "yeti" }`) is recorded through the plugin's own stream, which, unlike hark's (made with
/// `PA_STREAM_DONT_MOVE`), anyone on the session can move to another source (pavucontrol,
/// `pactl move-source-output`). The consent was for what the source was when `-D` was looked up.
/// A stream of this process moved onto a source that needs the other permission (a monitor, what
/// the system plays, on a microphone grant; a microphone on a system-audio grant) stops the
/// recording, as a revocation does (77). Until 2026-11-28 the moved stream was recorded on.
///
/// The stream is found by its `application.process.id`, which `StreamIdentity` sets for every
/// client of this process. Asked by the session thread at most twice a second, however often it
/// wakes (a status line: ten times), each time a round trip to the server and one per stream,
/// at most 200 ms in all; never by the capture thread. Where the server cannot be asked, or shows no stream of
/// this process for several checks running (a definition that names another server), a move
/// cannot be seen, and the recording says so once (`takeWarning`) and goes on.
final class PluginStreamWatch {
    private let connection: SoundServerConnection
    private let resource: PermissionResource
    private var lastCheck = 0
    private var checksWithoutStream = 0
    private var warning: String?
    private var warned = false

    static let checkIntervalNanoseconds = 500_000_000
    static let checksBeforeWarning = 4

    init?(choice: DeviceChoice) {
        guard let connection = choice.pluginServer else { return nil }
        self.connection = connection
        resource = choice.resource
    }

    /// Why the recording must stop: one of this process's streams reads a source the consent does
    /// not cover; nil while each reads what it may, or when the last check was under half a
    /// second ago.
    func revocation() -> String? {
        let now = MonotonicClock.nanoseconds()
        guard lastCheck == 0 || now - lastCheck >= Self.checkIntervalNanoseconds else { return nil }
        lastCheck = now
        let sources: [SoundServerSource]
        do throws(SoundServerError) {
            sources = try connection.sourcesRecorded(byProcess: getpid(), timeoutMilliseconds: 200)
        } catch {
            noStreamSeen(because: "the sound server cannot be asked: \(error)")
            return nil
        }
        if sources.isEmpty {
            noStreamSeen(because: "the sound server shows no stream of hark's")
            return nil
        }
        checksWithoutStream = 0
        for source in sources {
            let needed: PermissionResource = source.isMonitor ? .systemAudio : .microphone
            guard needed != resource else { continue }
            let what = source.isMonitor ? "what the system plays" : "a microphone"
            return "the recording's stream was moved to \(what) ('\(source.name)'), which needs \(needed.accessName) access"
        }
        return nil
    }

    /// A line for the user, once: the stream's source can no longer be followed.
    func takeWarning() -> String? {
        defer { warning = nil }
        return warning
    }

    private func noStreamSeen(because reason: String) {
        checksWithoutStream += 1
        guard checksWithoutStream >= Self.checksBeforeWarning, !warned else { return }
        warned = true
        warning = "warning: \(reason), so a move of the recording's stream to another source would not be seen; "
            + "the recording goes on"
    }
}
