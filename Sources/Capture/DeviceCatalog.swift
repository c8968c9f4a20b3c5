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
