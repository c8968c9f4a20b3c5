/// A capture source of the sound server, as the desktop's sound settings show it.
public struct SoundServerSource: Sendable, Equatable {
    /// The stable name (`alsa_input.usb-Blue_Microphones_Yeti-00.analog-stereo`): the same on every
    /// boot, unlike ALSA card numbers.
    public let name: String
    /// What the sound settings show ("Blue Yeti Studio").
    public let description: String
    public let sampleRate: Int
    public let channels: Int
    /// A sink's monitor: what the system plays, not a microphone.
    public let isMonitor: Bool
    /// The server's default source.
    public let isDefault: Bool
    /// The ALSA card and device the server reads this source from, when it is ALSA hardware.
    public let alsaCard: Int?
    public let alsaDevice: Int?

    public init(name: String, description: String, sampleRate: Int, channels: Int, isMonitor: Bool,
                isDefault: Bool, alsaCard: Int? = nil, alsaDevice: Int? = nil) {
        self.name = name
        self.description = description
        self.sampleRate = sampleRate
        self.channels = channels
        self.isMonitor = isMonitor
        self.isDefault = isDefault
        self.alsaCard = alsaCard
        self.alsaDevice = alsaDevice
    }

    /// The ALSA device that records this source through the sound server's ALSA plugin (Debian's
    /// pulse.conf declares `@args [ DEVICE ]`; PipeWire serves the same plugin through pipewire-pulse).
    /// hark records the source through the server's own stream (`SoundServerCapture`), and uses this
    /// name where the recording names its device: the `HARK_CAPTURE` tag, the access log, notices.
    public var alsaDeviceName: String {
        let needsQuotes = name.contains { !($0.isLetter || $0.isNumber || "._-".contains($0)) }
        return needsQuotes ? "pulse:DEVICE=\"\(name)\"" : "pulse:DEVICE=\(name)"
    }

    func markingDefault(_ defaultName: String?) -> SoundServerSource {
        SoundServerSource(name: name, description: description, sampleRate: sampleRate, channels: channels,
                          isMonitor: isMonitor, isDefault: name == defaultName, alsaCard: alsaCard, alsaDevice: alsaDevice)
    }
}

/// What the sound server said when asked.
public struct SoundServerListing: Sendable, Equatable {
    /// Name and version, e.g. "pulseaudio 16.1" (PipeWire says "PulseAudio (on PipeWire 0.3.65)").
    public let server: String
    public let sources: [SoundServerSource]

    public var microphones: [SoundServerSource] { sources.filter { !$0.isMonitor } }
    public var monitors: [SoundServerSource] { sources.filter(\.isMonitor) }
}

/// Why the sound server could not be asked.
public enum SoundServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libpulse.so.0 is not installed (Debian's libpulse0).
    case libraryMissing(String)
    /// No server is running for this user, or it refused the connection.
    case notRunning(String)
    /// The server `PULSE_SERVER` names could not be reached.
    case unreachable(server: String, reason: String)
    /// It did not answer within the deadline (milliseconds).
    case timedOut(milliseconds: Int)
    case failed(String)

    public var description: String {
        switch self {
        case .libraryMissing(let reason): "the sound server's client library is missing (install libpulse0): \(reason)"
        case .notRunning(let reason): "no sound server is running (\(reason))"
        case .unreachable(let server, let reason): "cannot reach the sound server PULSE_SERVER names, '\(server)' (\(reason))"
        case .timedOut(let milliseconds): "the sound server did not answer within \(milliseconds) ms"
        case .failed(let reason): reason
        }
    }
}

/// The sound server (PulseAudio, or PipeWire through its PulseAudio protocol), reached through
/// its own client library.
public enum SoundServer {
    /// The server's sources, default marked. Opens no stream, so it needs no grant.
    public static func listing(timeoutMilliseconds: Int = 2000) throws(SoundServerError) -> SoundServerListing {
        try SoundServerConnection(timeoutMilliseconds: timeoutMilliseconds).listing()
    }
}
