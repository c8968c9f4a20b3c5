import Capture
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

    /// The device as the user sees it in notices, the status line and the access log.
    var label: String {
        guard let source else { return alsaName }
        return "\(source.description) (\(alsaName))"
    }

    /// Resolves `name` before anything asks for consent or opens a device: ALSA's names first, so
    /// every name that worked before means what it meant; else the sound server's sources.
    /// Throws a usage error (64) for a name that fits several sources, and 69 for one that fits none.
    static func resolve(_ name: String) throws -> DeviceChoice {
        if DeviceCatalog.isALSADeviceName(name) { return DeviceChoice(alsaName: name, source: nil) }
        let listing: SoundServerListing
        do throws(SoundServerError) {
            listing = try SoundServer.listing()
        } catch {
            throw CommandFailure(message: "no capture device named '\(name)': it is not an ALSA device, and \(error); see 'hark devices'",
                                 exitCode: ExitStatus.unavailable)
        }
        switch SourceMatch(name, in: listing.sources) {
        case .found(let source):
            return DeviceChoice(alsaName: source.alsaDeviceName, source: source)
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

/// How hark appears in the desktop's microphone indicator and mixer (GNOME, KDE, pavucontrol):
/// by its own name, id and icon, not as "ALSA plug-in [hark]".
///
/// The capture path is ALSA's pulse plugin, which takes no stream properties; libpulse applies
/// `PULSE_PROP_OVERRIDE` to the client it makes in this process, and the server gives the client's
/// application properties to its streams (read back with `pactl list source-outputs`). The stream's
/// own `media.name` ("ALSA Capture") is set by the plugin and is not overridden this way, so the
/// purpose string cannot be shown there (docs/known-limits.md). Set once, on the main thread,
/// before any thread that could read the environment starts and before the device is opened.
enum StreamIdentity {
    /// The corresponding C function is `setenv`.
    static func announce(appName: String, appIdentifier: String) {
        let properties = [
            ("application.name", appName),
            ("application.id", appIdentifier),
            ("application.icon_name", "audio-input-microphone"),
            ("media.role", "production"),
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
