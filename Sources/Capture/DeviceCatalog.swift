import CALSA

/// A PCM that can capture, as ALSA's configuration names and describes it.
public struct CaptureDeviceDescription: Sendable, Equatable {
    /// The name to pass to `-D`.
    public let name: String
    /// ALSA's description, one entry per line.
    public let descriptionLines: [String]
}

/// Lists ALSA's capture-capable PCMs, as `arecord -L` does but without playback-only entries.
public enum DeviceCatalog {
    /// Capture-capable PCMs, `default` first when present. Not real-time safe.
    /// The corresponding C functions are `snd_device_name_hint` and `snd_device_name_get_hint`.
    public static func captureDevices() -> [CaptureDeviceDescription] {
        ALSALibrary.silenceErrorMessages()
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }

        var devices: [CaptureDeviceDescription] = []
        var cursor = hints
        while let hint = cursor.pointee {
            defer { cursor += 1 }
            // IOID is absent for devices that do both directions, "Input" or "Output" otherwise.
            if let direction = hintValue(hint, "IOID"), direction != "Input" { continue }
            guard let name = hintValue(hint, "NAME") else { continue }
            let description = hintValue(hint, "DESC") ?? ""
            let lines = description.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
            devices.append(CaptureDeviceDescription(name: name, descriptionLines: lines))
        }
        if let index = devices.firstIndex(where: { $0.name == "default" }), index > 0 {
            devices.insert(devices.remove(at: index), at: 0)
        }
        return devices
    }

    private static func hintValue(_ hint: UnsafeMutableRawPointer, _ key: String) -> String? {
        guard let value = snd_device_name_get_hint(hint, key) else { return nil }
        defer { free(value) }
        return String(cString: value)
    }
}

extension DeviceCatalog {
    /// Whether `name` is an ALSA device name: its base (before any `:` arguments, as in `hw:1,0`
    /// or `pulse:DEVICE=…`) is a PCM that ALSA's configuration defines. A name that is not goes to
    /// the sound server's sources (`hark record -D "Blue Yeti"`). Opens nothing. Not real-time safe.
    /// The corresponding C function is `snd_config_search`.
    public static func isALSADeviceName(_ name: String) -> Bool {
        let base = name.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? name
        // '.' and ' ' never occur in a PCM's base name but do in sound-server source names and
        // descriptions ("vmic.monitor", "Blue Yeti"); '"' is configuration syntax.
        guard !base.isEmpty, !base.contains(where: { $0 == "." || $0 == " " || $0 == "\"" }) else { return false }
        ALSALibrary.silenceErrorMessages()
        return hark_alsa_defines_pcm(base) != 0
    }
}

extension DeviceCatalog {
    /// Which sound server's ALSA plugin `name` (`default` on a desktop) is, if any, so that a
    /// recording can talk to the server itself instead. Opens nothing. Not real-time safe.
    /// The corresponding C function is `snd_config_search_definition`.
    public static func soundServerPlugin(_ name: String) -> SoundServerPlugin? {
        ALSALibrary.silenceErrorMessages()
        switch hark_alsa_pcm_sound_server_plugin(name) {
        case 1: return .pulse
        case 2: return .pipeWire
        default: return nil
        }
    }

    /// The sound server a PCM's audio comes from, followed through its definition's slaves (a
    /// user's `pcm.mon { type pulse; device "x.monitor" }`, a `plug` or `route` in front of one,
    /// `pipewire:NODE=…`), the source its plugin names (nil: the server's default) and the server
    /// it names (its `server`; nil: the one the environment names). Nil when the audio does not
    /// come from a sound server's plugin (a card, a `file` plugin's `infile`) or the chain cannot be
    /// followed. Opens nothing.
    /// The corresponding C functions are `snd_config_search_definition` and `snd_config_search`.
    public static func soundServerBehind(_ name: String) -> (plugin: SoundServerPlugin, source: String?, server: String?)? {
        ALSALibrary.silenceErrorMessages()
        var device = [CChar](repeating: 0, count: 1024)
        var server = [CChar](repeating: 0, count: 1024)
        let plugin: SoundServerPlugin
        switch hark_alsa_pcm_server_behind(name, &device, device.count, &server, server.count) {
        case 1: plugin = .pulse
        case 2: plugin = .pipeWire
        default: return nil
        }
        func text(_ characters: [CChar]) -> String? {
            let text = String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return text.isEmpty ? nil : text
        }
        return (plugin, text(device), text(server))
    }

    /// The ALSA plugins through which a sound server's clients reach it.
    public enum SoundServerPlugin: Sendable {
        /// alsa-plugins' `pulse` (Debian's default while a sound server runs).
        case pulse
        /// PipeWire's own `pipewire` (pipewire-alsa: the default where alsa-plugins' pulse hook is
        /// not installed, as on Fedora and Arch).
        case pipeWire
    }
}

extension DeviceCatalog {
    /// The index of the sound card whose id is `id` ("PCH", "Yeti"), as the sound server's
    /// `alsa.card` property gives it. The corresponding C function is `snd_card_get_index`.
    public static func cardIndex(_ id: String) -> Int? {
        let index = snd_card_get_index(id)
        return index >= 0 ? Int(index) : nil
    }
}
