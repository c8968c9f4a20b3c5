import ArgumentParser
import AudioFormat
import Capture
import RecordPermission
#if canImport(Glibc)
import Glibc
#endif

/// `hark devices`: the capture-capable ALSA PCMs, default first, as `arecord -L` lists them.
/// With `-v`, also what each accepts, which means opening it, so only with microphone access.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the ALSA devices hark can record from (names for -D), default first.",
        discussion: """
            With -v, hark opens each device for capture (it reads no audio) and shows the rates, sample \
            formats and channel counts it accepts; a device that cannot be opened is listed with the \
            reason. Opening a capture device needs microphone access: -v never asks for it, and without \
            it lists the names only and exits 77 saying how to allow it.
            """
    )

    @Flag(name: .shortAndLong, help: "Also show the rates, sample formats and channel counts each device accepts (opens each device; needs microphone access already allowed).")
    var verbose = false

    func run() throws {
        let devices = DeviceCatalog.captureDevices()
        guard !devices.isEmpty else {
            throw CommandFailure(message: "no capture devices found (no sound card and no sound server?)",
                                 exitCode: ExitStatus.unavailable)
        }
        var grant: MicrophoneGrant?
        var refusal: AccessRefusal?
        if verbose {
            // Never a prompt here: `devices` is for looking around (DESIGN §1). The gate still
            // decides, since CaptureDevice and the probe alike open a device only with a grant.
            switch HarkManifest.gate.existingGrant(for: .audio) {
            case .granted(let granted): grant = granted
            case .refused(let refused): refusal = refused
            }
        }
        var listing = ""
        for device in devices {
            listing += device.name + "\n"
            for line in device.descriptionLines { listing += "    \(line)\n" }
            if let grant {
                let probe = withStandardErrorSilenced { DeviceCapabilities.probe(device.name, grant: grant) }
                for line in probe.listingLines { listing += "    \(line)\n" }
            }
        }
        print(listing, terminator: "")
        if let refusal {
            throw CommandFailure(message: "-v opens each device, which needs microphone access: \(refusal.message)",
                                 exitCode: ExitStatus.noPermission)
        }
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
            var lines = ["rates: \(rates); of the common rates: \(common)", "formats: \(formats)"]
            if !device.otherFormats.isEmpty { lines.append("other formats (not recorded by hark): \(device.otherFormats.joined(separator: ", "))") }
            lines.append("channels: \(channels)")
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
