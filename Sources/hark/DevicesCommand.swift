import ArgumentParser
import AudioFormat
import Capture
import RecordPermission
import SoundServer
#if canImport(Glibc)
import Glibc
#endif

/// `hark devices`: what the user can record from, without opening anything: the sound server's
/// sources by the names the desktop's sound settings show (microphones, then monitors), then ALSA's
/// capture PCMs as `arecord -L` lists them, default first, with converter and bridge plugins that
/// are not devices hidden unless `--all`. With `-v`, also what each ALSA device accepts, which means
/// opening it, so only with microphone access.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List what hark can record from (names for -D): sound-server sources, then ALSA devices.",
        discussion: """
            -D takes a sound-server source's name or any part of its description ("Blue Yeti"), or an ALSA \
            device name. Listing opens no device and needs no permission. With -v, hark opens each ALSA \
            device for capture (it reads no audio) and shows the rates, sample formats and channel counts \
            it accepts; a device that cannot be opened is listed with the reason. Opening a capture device \
            needs microphone access: -v never asks for it, and without it lists the names only and exits 77 \
            saying how to allow it.
            """
    )

    @Flag(name: .shortAndLong, help: "Also show the rates, sample formats, channel counts and channel maps of each ALSA device (opens each device; needs microphone access already allowed).")
    var verbose = false

    @Flag(help: "Also list ALSA's converter and bridge plugins (lavrate, speexrate, upmix, jack, oss, null, …), which are not capture devices.")
    var all = false

    @Flag(help: "Print the listing as one JSON object, for scripts.")
    var json = false

    /// ALSA plugin entries that convert or bridge to something else rather than capture: the rate
    /// converters and channel mixers of alsa-plugins, other sound systems' bridges, and `null`.
    static let pluginEntries: Set<String> = ["lavrate", "samplerate", "samplerate_best", "samplerate_medium",
        "samplerate_order", "samplerate_linear", "speexrate", "speexrate_best", "speexrate_medium", "upmix",
        "vdownmix", "jack", "oss", "null", "a52", "usbstream", "arcam_av", "speex"]

    func validate() throws {
        if json && verbose { throw ValidationError("--json and -v cannot be used together") }
    }

    func run() throws {
        let server = Result { () throws(SoundServerError) in try SoundServer.listing() }
        let everyALSADevice = DeviceCatalog.captureDevices()
        let alsaDevices = all ? everyALSADevice : everyALSADevice.filter { !Self.pluginEntries.contains($0.name) }
        let sources = (try? server.get())?.sources ?? []
        if json {
            print(String(decoding: jsonListing(server: server, sources: sources, alsaDevices: alsaDevices)
                .serialized(.indented), as: UTF8.self))
            return
        }
        guard !everyALSADevice.isEmpty || !sources.isEmpty else {
            throw CommandFailure(message: "no capture devices found (no sound card and no sound server?)",
                                 exitCode: ExitStatus.unavailable)
        }
        var grant: CaptureGrant?
        var refusal: AccessRefusal?
        if verbose {
            // Never a prompt here: `devices` is for looking around (DESIGN §1). The gate still
            // decides, since CaptureDevice and the probe alike open a device only with a grant.
            switch HarkManifest.gate.existingGrant(for: .audio) {
            case .granted(let granted): grant = granted
            case .refused(let refused): refusal = refused
            }
        }
        var listing = soundServerSection(server)
        listing += "ALSA devices:\n"
        for device in alsaDevices {
            let held = Self.isHeld(device.name, by: sources) ? "  [in use by the sound server]" : ""
            listing += "  \(device.name.shownOnTerminal)\(held)\n"
            for line in device.descriptionLines { listing += "      \(line.shownOnTerminal)\n" }
            if let grant {
                let probe = withStandardErrorSilenced { DeviceCapabilities.probe(device.name, grant: grant) }
                for line in probe.listingLines { listing += "      \(line)\n" }
            }
        }
        print(listing, terminator: "")
        if let refusal {
            throw CommandFailure(message: "-v opens each device, which needs microphone access: \(refusal.message)",
                                 exitCode: ExitStatus.noPermission)
        }
    }

    private func soundServerSection(_ server: Result<SoundServerListing, SoundServerError>) -> String {
        let listing: SoundServerListing
        switch server {
        case .success(let answer): listing = answer
        case .failure(let error): return "Sound server: none reachable (\(error))\n"
        }
        func lines(_ sources: [SoundServerSource]) -> String {
            sources.map { source in
                "  \(source.isDefault ? "*" : " ") \(source.name.shownOnTerminal)  \(source.description.shownOnTerminal) (\(source.sampleRate) Hz, \(source.channels) ch)\n"
            }.joined()
        }
        var text = "Sound server: \(listing.server.shownOnTerminal)\n"
        text += "Microphones (-D takes the name or part of the description; * is the default):\n"
        text += listing.microphones.isEmpty ? "    none\n" : lines(listing.microphones)
        text += "System audio (monitors: what the system plays):\n"
        text += listing.monitors.isEmpty ? "    none\n" : lines(listing.monitors)
        return text
    }

    /// Whether `name` is an ALSA card device (`hw:CARD=…,DEV=…` and its plug/front variants) that
    /// one of the sound server's sources reads, so opening it directly would find it busy. Not a
    /// sink's monitor: it carries its sink's card and device, a playback device, whose number a
    /// capture device of the same card shares (`hw:CARD=PCH,DEV=0` was marked in use by the
    /// speakers' monitor). `cardIndex` is the card's index by its id (ALSA's, but for tests).
    static func isHeld(_ name: String, by sources: [SoundServerSource],
                       cardIndex: (String) -> Int? = DeviceCatalog.cardIndex) -> Bool {
        guard let cardField = name.firstRange(of: "CARD=") else { return false }
        let card = name[cardField.upperBound...].prefix { $0 != "," }
        let device = name.firstRange(of: "DEV=").map { Int(name[$0.upperBound...].prefix { $0.isNumber }) ?? 0 } ?? 0
        guard let index = cardIndex(String(card)) else { return false }
        return sources.contains { !$0.isMonitor && $0.alsaCard == index && ($0.alsaDevice ?? 0) == device }
    }

    private func jsonListing(server: Result<SoundServerListing, SoundServerError>, sources: [SoundServerSource],
                             alsaDevices: [CaptureDeviceDescription]) -> JSONValue {
        var object: [String: JSONValue] = [:]
        switch server {
        case .success(let listing):
            object["soundServer"] = .object([
                "server": .string(listing.server),
                "sources": .array(listing.sources.map { source in
                    .object([
                        "name": .string(source.name), "description": .string(source.description),
                        "rate": .number(Double(source.sampleRate)), "channels": .number(Double(source.channels)),
                        "monitor": .bool(source.isMonitor), "default": .bool(source.isDefault),
                        "alsaDevice": .string(source.alsaDeviceName),
                    ])
                }),
            ])
        case .failure(let error):
            object["soundServer"] = .null
            object["soundServerError"] = .string(error.description)
        }
        object["alsa"] = .array(alsaDevices.map { device in
            .object(["name": .string(device.name), "description": .array(device.descriptionLines.map(JSONValue.string)),
                     "heldBySoundServer": .bool(Self.isHeld(device.name, by: sources))])
        })
        return .object(object)
    }
}

extension DeviceProbe {
    /// The lines under a device's name in `hark devices -v`.
    var listingLines: [String] {
        switch self {
        case .unavailable(let reason):
            return ["cannot open: \(reason)"]
        case .capabilities(let device):
            let rates = device.rates.count == 1 ? "\(device.rates.lowerBound) Hz" : "\(device.rates.lowerBound)–\(device.rates.upperBound) Hz"
            let common = device.commonRates.isEmpty ? "none" : device.commonRates.map(String.init).joined(separator: ", ")
            let formats = device.sampleFormats.isEmpty
                ? "none of hark's (\(SampleFormat.allCases.map(\.alsaName).joined(separator: ", ")))"
                : device.sampleFormats.map(\.alsaName).joined(separator: ", ")
            let channels = device.channels.count == 1 ? "\(device.channels.lowerBound)" : "\(device.channels.lowerBound)–\(device.channels.upperBound)"
            // The device's own range, and what of it hark takes where that is less.
            let recordable = PCMFormat.recordableRates, channelCounts = PCMFormat.recordableChannels
            let rateLimit = recordable.contains(device.rates.lowerBound) && recordable.contains(device.rates.upperBound)
                ? "" : " (hark records \(recordable.lowerBound)–\(recordable.upperBound) Hz)"
            let channelLimit = channelCounts.contains(device.channels.lowerBound) && channelCounts.contains(device.channels.upperBound)
                ? "" : " (hark records \(channelCounts.lowerBound)–\(channelCounts.upperBound))"
            var lines = ["rates: \(rates)\(rateLimit); of the common rates: \(common)", "formats: \(formats)"]
            if !device.otherFormats.isEmpty { lines.append("other formats (not recorded by hark): \(device.otherFormats.joined(separator: ", "))") }
            lines.append("channels: \(channels)\(channelLimit)")
            if !device.channelMaps.isEmpty { lines.append("channel maps: \(device.channelMaps.joined(separator: "; "))") }
            return lines
        }
    }
}

/// Runs `body` with file descriptor 2 pointed at /dev/null. Some ALSA plugins' own libraries print
/// to stderr when a device is opened (JACK's client library: "Cannot connect to server socket…"),
/// past ALSA's error handler; hark says what went wrong itself, in the listing. Only for this
/// single-threaded command: another thread's messages would be lost meanwhile.
/// The corresponding C functions are `dup` and `dup2`.
private func withStandardErrorSilenced<Result>(_ body: () -> Result) -> Result {
    let saved = dup(STDERR_FILENO)
    let null = open("/dev/null", O_WRONLY)
    guard saved >= 0, null >= 0 else {
        if saved >= 0 { close(saved) }
        if null >= 0 { close(null) }
        return body()
    }
    dup2(null, STDERR_FILENO)
    close(null)
    defer {
        dup2(saved, STDERR_FILENO)
        close(saved)
    }
    return body()
}
