import Capture
import RecordPermission
import SoundServer
#if canImport(Glibc)
import Glibc
#endif

/// What `-D` named: an ALSA device as it is, or a sound-server source found by name or description.
struct DeviceChoice {
    /// What ALSA opens.
    let alsaName: String
    /// The source, when `-D` named one of the sound server's.
    let source: SoundServerSource?
    /// The source the recording comes from through the sound server's own stream: the one `-D`
    /// named, or the one an ALSA-style name reaches (`default`, `pulse`, `pulse:@DEFAULT_SOURCE@`),
    /// as the server answered while the name was looked up; nil through ALSA.
    let soundServerSource: SoundServerSource?
    /// What recording it needs consent for: `.systemAudio` for a monitor (what the system plays),
    /// else `.microphone`.
    let resource: PermissionResource
    /// The connection made to the sound server while looking the name up, for the recording's
    /// stream (`RecordingSession`'s `soundServer`); nil when the audio comes through ALSA.
    let soundServer: SoundServerConnection?
    /// The connection that asked, when the audio comes through ALSA from a definition that leads
    /// to the server's plugin: the plugin's stream can be moved, so the session keeps asking which
    /// source it reads (`PluginStreamWatch`).
    let pluginServer: SoundServerConnection?

    /// Through what the audio comes: the sound server's own stream for its sources, for `pulse` and
    /// `pulse:SOURCE`, and for ALSA's `default` where that is the server's plugin (a desktop);
    /// ALSA for everything else. Worked out once: for `default` it asks ALSA's configuration.
    let route: CaptureRoute

    /// `reached`: the source an ALSA-style name reaches, as the server answered.
    private init(alsaName: String, source: SoundServerSource?, reached: SoundServerSource? = nil, resource: PermissionResource,
                 connection: SoundServerConnection?) {
        self.alsaName = alsaName
        self.source = source
        self.resource = resource
        route = Self.route(alsaName: alsaName, source: source, reached: reached, serverAnswered: connection != nil)
        if case .soundServer = route {
            soundServer = connection
            soundServerSource = source ?? reached
            pluginServer = nil
        } else {
            soundServer = nil
            soundServerSource = nil
            pluginServer = reached != nil ? connection : nil
        }
    }

    /// `serverAnswered`: a libpulse connection was made while looking the name up.
    /// `serverAnswered`: a libpulse connection was made while looking the name up. A source named
    /// the ALSA way (`pulse:NAME`) is recorded by the name the server answered with: pipewire-pulse
    /// refuses `@DEFAULT_SOURCE@` for a stream that may not be moved, which PulseAudio takes.
    private static func route(alsaName: String, source: SoundServerSource?, reached: SoundServerSource?,
                              serverAnswered: Bool) -> CaptureRoute {
        if let source { return .soundServer(source: source.name) }
        switch pulsePluginTarget(alsaName) {
        case .named(let name): return .soundServer(source: reached?.name ?? name)
        case .defaultSource where unwrapped(alsaName) != "default": return .soundServer(source: nil)
        case .defaultSource:
            switch DeviceCatalog.soundServerPlugin("default") {
            case .pulse: return .soundServer(source: nil)
            // PipeWire's own plugin: through its PulseAudio protocol (pipewire-pulse) when that
            // answered, as the same default source, so the stream carries hark's name, stays on
            // that source and is checked against the grant; else through the plugin.
            case .pipeWire where serverAnswered: return .soundServer(source: nil)
            case .pipeWire, nil: return .alsa
            }
        case nil: return .alsa
        }
    }

    /// The device as the user sees it in notices, the status line and the access log.
    var label: String {
        guard let source = soundServerSource else { return alsaName }
        return "\(source.description) (\(alsaName))"
    }

    /// Resolves `name` before anything asks for consent or opens a device: ALSA's names first, so
    /// every name that worked before means what it meant; else the sound server's sources.
    /// Throws a usage error (64) for a name that fits several sources, and 69 for one that fits none.
    static func resolve(_ name: String) throws -> DeviceChoice {
        // `pulse` and `pulse:SOURCE` are recorded through the server's own stream: ALSA's
        // configuration (a tenth of hark's start) is not read for them, and they work where ALSA's
        // pulse plugin is not installed.
        let isServerName = unwrapped(name) != "default" && pulsePluginTarget(name) != nil
        if isServerName || DeviceCatalog.isALSADeviceName(name) {
            let behind = lookBehind(alsaName: name)
            guard let resource = behind.resource else {
                throw CommandFailure(message: "cannot tell whether '\(name)' records a microphone or what this computer plays: it leads to "
                                     + "a sound server's default source, and the sound server cannot be asked; start the sound server, "
                                     + "or name the source in the device's definition", exitCode: ExitStatus.unavailable)
            }
            return DeviceChoice(alsaName: name, source: nil, reached: behind.source,
                                resource: resource, connection: behind.connection)
        }
        let connection: SoundServerConnection
        let listing: SoundServerListing
        do throws(SoundServerError) {
            connection = try SoundServerConnection()
            listing = try connection.listing()
        } catch {
            throw CommandFailure(message: "no capture device named '\(name)': it is not an ALSA device, and \(error); see 'hark devices'",
                                 exitCode: ExitStatus.unavailable)
        }
        switch SourceMatch(name, in: listing.sources) {
        case .found(let source):
            return DeviceChoice(alsaName: source.alsaDeviceName, source: source,
                                resource: source.isMonitor ? .systemAudio : .microphone, connection: connection)
        case .ambiguous(let candidates):
            let names = candidates.map { "'\($0.name)' (\($0.description))" }.joined(separator: ", ")
            throw CommandFailure(message: "'\(name)' fits \(candidates.count) sources: \(names); give more of the description, or the name",
                                 exitCode: ExitStatus.usage)
        case .none:
            let known = listing.sources.map { "'\($0.description)'" }.joined(separator: ", ")
            throw CommandFailure(message: "no capture device or sound-server source named '\(name)' (sources: \(known.isEmpty ? "none" : known); see 'hark devices')",
                                 exitCode: ExitStatus.unavailable)
        }
    }
}

extension DeviceChoice {
    /// The sound server's source an ALSA name reaches, so that naming a monitor the ALSA way
    /// (`pulse:DEVICE=speakers.monitor`, or `pulse`/`default` while the server's default source is
    /// a monitor) cannot record the system's audio on a microphone grant, and so the recording is
    /// named after the source it comes from; what consent it needs; and the connection that asked,
    /// for the stream. Asks the server only about names that reach its ALSA plugin, and only about
    /// the source the name reaches (as the plugin does, a number is the server's index of a
    /// source); with no server reachable, or a source it does not know, no source.
    ///
    /// A name of the plugin (`pulse:…`) is recorded through hark's own stream, which checks the
    /// source again once connected. Any other name whose ALSA definition leads to a server's plugin
    /// (a user's `pcm.mon { type pulse; device "x.monitor" }`, a `plug` or `route` in front of one,
    /// PipeWire's `pipewire:NODE=…`) is recorded through ALSA as it is, so the consent is decided
    /// here: by the source the server says it is, and where it names one the server cannot say
    /// (PipeWire's node of a sink, whose monitor it records; no server to ask), as system audio.
    /// Until 2026-11-28 only the plugin's own names were looked behind, and such a name recorded
    /// what the system plays on the microphone's grant.
    ///
    /// A definition that names its server (the pulse plugin's `server`) is looked up on that
    /// server. The resource is nil when it cannot be told: the name is recorded through a plugin
    /// (not hark's own stream, which checks its source once connected) from the server's default
    /// source, and the server cannot be asked what that is. Until 2026-11-29 that counted as a
    /// microphone, and a monitor that was the default was recorded on the microphone's grant.
    static func lookBehind(alsaName name: String)
        -> (source: SoundServerSource?, resource: PermissionResource?, connection: SoundServerConnection?) {
        let target: PulsePluginTarget
        let unknown: PermissionResource?
        var server: String?
        if let named = pulsePluginTarget(name) {
            target = named
            // `default` as PipeWire's plugin is recorded through it when pipewire-pulse does not
            // answer (`route`); `pulse`, `pulse:…` and the pulse plugin's `default`, through
            // hark's stream; a `default` that is no server's, from a card.
            let throughPlugin = named == .defaultSource && unwrapped(name) == "default"
                && DeviceCatalog.soundServerPlugin("default") == .pipeWire
            unknown = throughPlugin ? nil : .microphone
        } else if let behind = DeviceCatalog.soundServerBehind(name) {
            target = behind.source.map(PulsePluginTarget.named) ?? .defaultSource
            // A source named that the server cannot say is taken as a sink's (PipeWire's node),
            // whose monitor is recorded.
            unknown = behind.source != nil ? .systemAudio : nil
            // The server the definition names is the one asked (until 2026-11-29 the user's own
            // was, which could say "microphone" of a default source that on the other is a
            // monitor). PipeWire's plugin names a PipeWire remote, which libpulse cannot reach.
            if let named = behind.server {
                guard behind.plugin == .pulse else { return (nil, unknown, nil) }
                server = named
            }
        } else {
            return (nil, .microphone, nil)
        }
        guard let connection = try? SoundServerConnection(server: server) else { return (nil, unknown, nil) }
        let source: String? = switch target {
        case .defaultSource: nil
        case .named(let sourceName): sourceName
        }
        if let found = try? connection.identify(source: source) {
            return (found, found.isMonitor ? .systemAudio : .microphone, connection)
        }
        // PipeWire's plugin takes a sink's node and records its monitor.
        if unknown == .systemAudio, let source, let monitor = try? connection.identify(source: source + ".monitor") {
            return (monitor, .systemAudio, connection)
        }
        return (nil, unknown, nil)
    }

    enum PulsePluginTarget: Equatable {
        case defaultSource
        case named(String)
    }

    /// `name` without ALSA's `plug:` converter around it (`plug:pulse`, `plug:"pulse:DEVICE=x"`,
    /// `plug:SLAVE=default`): what the converter records from, so that spelling a monitor through
    /// it still needs the system-audio grant.
    static func unwrapped(_ name: String) -> String {
        guard name.hasPrefix("plug:") else { return name }
        var inner = Substring(name.dropFirst("plug:".count))
        if inner.hasPrefix("SLAVE=") { inner = inner.dropFirst("SLAVE=".count) }
        for quote in ["\"", "'"] where inner.count >= 2 && inner.hasPrefix(quote) && inner.hasSuffix(quote) {
            inner = inner.dropFirst().dropLast()
        }
        return unwrapped(String(inner))
    }

    /// What ALSA's pulse plugin records for `name`: `pulse` and `default` (Debian routes it to the
    /// server while one runs) take the default source; `pulse:NAME`, `pulse:DEVICE=NAME`, with or
    /// without double quotes, take NAME. Nil for every other device.
    static func pulsePluginTarget(_ wrapped: String) -> PulsePluginTarget? {
        let name = unwrapped(wrapped)
        if name == "pulse" || name == "default" { return .defaultSource }
        guard name.hasPrefix("pulse:") else { return nil }
        var argument = Substring(name.dropFirst("pulse:".count))
        if argument.hasPrefix("DEVICE=") { argument = argument.dropFirst("DEVICE=".count) }
        if argument.count >= 2, argument.first == "\"", argument.last == "\"" { argument = argument.dropFirst().dropLast() }
        return argument.isEmpty ? .defaultSource : .named(String(argument))
    }
}

/// How hark appears in the desktop's microphone indicator and mixer (GNOME, KDE, pavucontrol):
/// by its own name, id and icon, not as "ALSA plug-in [hark]".
///
/// libpulse applies `PULSE_PROP_OVERRIDE` to every client made in this process, and the server
/// gives the client's application properties to its streams (read back with `pactl list
/// source-outputs`): hark's own record stream (`SoundServerCapture`, which also names the stream by
/// the purpose string), and ALSA's pulse plugin, used when a user's own ALSA device reaches the
/// server through it (its stream's `media.name` stays "ALSA Capture"). Set once, on the main
/// thread, before any thread that could read the environment starts and before the first
/// connection to the server: looking `-D` up makes it, and the stream uses it.
enum StreamIdentity {
    /// The corresponding C function is `setenv`.
    static func announce(appName: String, appIdentifier: String) {
        let properties = [
            ("application.name", appName),
            ("application.id", appIdentifier),
            ("application.icon_name", "audio-input-microphone"),
            ("media.role", "production"),
            // Set here, not left to libpulse, which keeps a value `PULSE_PROP` gives: the plugin's
            // stream is found by it (`PluginStreamWatch`), and a false one would hide it.
            ("application.process.id", String(getpid())),
        ]
        // pa_proplist_from_string's syntax: key="value" pairs, '"' and '\' escaped with '\'.
        let text = properties.map { key, value in
            var escaped = ""
            for character in value {
                if character == "\\" || character == "\"" { escaped.append("\\") }
                escaped.append(character)
            }
            return "\(key)=\"\(escaped)\""
        }.joined(separator: " ")
        setenv("PULSE_PROP_OVERRIDE", text, 1)
    }
}
