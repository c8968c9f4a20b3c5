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
/// Asked by the session thread about twice a second (the server's answer is two round trips,
/// about a millisecond); never by the capture thread. A server that stops answering ends nothing:
/// the plugin's stream ends with it, and capture reports that.
struct PluginStreamWatch {
    private let connection: SoundServerConnection
    private let resource: PermissionResource

    init?(choice: DeviceChoice) {
        guard let connection = choice.pluginServer else { return nil }
        self.connection = connection
        resource = choice.resource
    }

    /// Why the recording must stop: one of this process's streams reads a source the consent does
    /// not cover; nil while each reads what it may.
    func revocation() -> String? {
        guard let sources = try? connection.sourcesRecorded(byProcess: getpid()) else { return nil }
        for source in sources {
            let needed: PermissionResource = source.isMonitor ? .systemAudio : .microphone
            guard needed != resource else { continue }
            let what = source.isMonitor ? "what the system plays" : "a microphone"
            return "the recording's stream was moved to \(what) ('\(source.name)'), which needs \(needed.accessName) access"
        }
        return nil
    }
}
