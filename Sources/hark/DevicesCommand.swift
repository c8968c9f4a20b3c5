import ArgumentParser
import Capture

/// `hark devices`: the capture-capable ALSA PCMs, default first, as `arecord -L` lists them.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List the ALSA devices hark can record from (names for -D), default first."
    )

    func run() throws {
        let devices = DeviceCatalog.captureDevices()
        guard !devices.isEmpty else {
            throw CommandFailure(message: "no capture devices found (no sound card and no sound server?)",
                                 exitCode: ExitStatus.unavailable)
        }
        var listing = ""
        for device in devices {
            listing += device.name + "\n"
            for line in device.descriptionLines { listing += "    \(line)\n" }
        }
        print(listing, terminator: "")
    }
}
