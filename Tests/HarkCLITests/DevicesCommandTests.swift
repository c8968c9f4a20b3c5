import Foundation
import Testing

@Suite struct DevicesCommandTests {
    @Test func listsCaptureDevicesWithDefaultFirst() throws {
        let rig = try ALSATestRig(input: Data())
        try rig.startPulseAudio()
        let result = try runHark(["devices"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let devices = deviceBlocks(result.standardOutput)
        #expect(devices.first?.name == "default", "\(devices)")
        #expect(devices.contains { $0.name == "filecap" } && devices.contains { $0.name == "pulse" })
        // Descriptions are indented under their device, as arecord -L prints them.
        #expect(devices.contains { !$0.lines.isEmpty })
        // Converter and bridge plugins are not capture devices: only with --all.
        let plugins = ["lavrate", "speexrate", "upmix", "vdownmix", "jack", "oss", "null"]
        #expect(!devices.contains { plugins.contains($0.name) }, "\(devices.map(\.name))")
        let everything = deviceBlocks(try runHark(["devices", "--all"], rig: rig).standardOutput)
        #expect(everything.contains { $0.name == "null" }, "\(everything.map(\.name))")
        #expect(Set(devices.map(\.name)).isSubset(of: Set(everything.map(\.name))))
    }

    /// Two devices that cannot be opened: a sound card that does not exist, and a file plugin
    /// whose input file is missing.
    static let brokenDevices = """
        pcm.broken { type hw; card 9 }
        pcm.noinput { type file; slave.pcm "null"; file "/dev/null"; infile "/nonexistent/hark-input.raw"; format "raw" }
        """

    @Test func verboseShowsWhatEachDeviceAcceptsAndWhyOthersCannotBeOpened() throws {
        let rig = try ALSATestRig(input: Data(count: 4), extraConfiguration: Self.brokenDevices)
        try rig.startPulseAudio()
        let result = try runHark(["devices", "-v"], rig: rig)
        #expect(result.status == 0, "a device that cannot be opened is listed, not an error: \(result.standardError)")
        #expect(result.standardError.isEmpty, "no library chatter (JACK's) and no error: \(result.standardError)")
        let devices = deviceBlocks(result.standardOutput)
        let plain = deviceBlocks(try runHark(["devices"], rig: rig).standardOutput)
        #expect(devices.map(\.name) == plain.map(\.name), "the same devices in the same order")

        let everyCommonRate = "of the common rates: 8000, 11025, 16000, 22050, 32000, 44100, 48000, 88200, 96000, 176400, 192000"
        let filecap = try #require(devices.first { $0.name == "filecap" }?.lines)
        #expect(filecap.contains { $0.hasPrefix("rates: ") && $0.hasSuffix(everyCommonRate) }, "\(filecap)")
        #expect(filecap.contains("formats: S16_LE, S24_LE, S32_LE, FLOAT_LE"), "\(filecap)")
        #expect(filecap.contains { $0.hasPrefix("channels: 1–") }, "\(filecap)")

        // PulseAudio: 1–384000 Hz, up to 32 channels (PA_CHANNELS_MAX), converting any format; and
        // what of that hark records, which is less.
        let pulse = try #require(devices.first { $0.name == "pulse" }?.lines)
        #expect(pulse.contains { $0.hasPrefix("rates: 1–384000 Hz (hark records 1000–768000 Hz)") && $0.hasSuffix(everyCommonRate) },
                "\(pulse)")
        #expect(pulse.contains("formats: S16_LE, S24_LE, S32_LE, FLOAT_LE"), "\(pulse)")
        #expect(pulse.contains("channels: 1–32 (hark records 1–8)"), "\(pulse)")

        for name in ["broken", "noinput"] {
            let lines = try #require(devices.first { $0.name == name }?.lines, "\(name) is listed")
            #expect(lines.last == "cannot open: no such device", "\(name): \(lines)")
        }
    }

    /// The channel maps a device offers (`snd_pcm_query_chmaps`), from the rig's `mappedcap`.
    @Test func verboseShowsTheChannelMapsADeviceOffers() throws {
        let rig = try ALSATestRig(input: Data(count: 4), deviceChannelMap: "FL,FR,RL,RR,FC,LFE")
        let result = try runHark(["devices", "-v"], rig: rig)
        #expect(result.status == 0, "\(result.standardError)")
        let devices = deviceBlocks(result.standardOutput)
        let mapped = try #require(devices.first { $0.name == "mappedcap" }?.lines, "\(devices.map(\.name))")
        #expect(mapped.contains("channel maps: FL,FR,RL,RR,FC,LFE"), "\(mapped)")
        let plain = try #require(devices.first { $0.name == "filecap" }?.lines)
        #expect(!plain.contains { $0.hasPrefix("channel maps:") }, "a device with no map says nothing: \(plain)")
    }

    @Test func verboseWithoutConsentListsNamesOnlyAndExits77WithoutAsking() throws {
        let rig = try ALSATestRig(input: Data(count: 4), grantMicrophone: false, extraConfiguration: Self.brokenDevices)
        let undecided = try runHark(["devices", "-v"], rig: rig)
        #expect(undecided.status == 77, "\(undecided.standardError)")
        #expect(undecided.errorLines == ["hark: -v opens each device, which needs microphone access: hark has not been allowed to use the microphone yet; allow it with 'hark permissions grant microphone'"])
        let devices = deviceBlocks(undecided.standardOutput)
        #expect(devices.contains { $0.name == "filecap" }, "the names are still listed")
        #expect(!devices.contains { $0.lines.contains { $0.hasPrefix("rates:") || $0.hasPrefix("cannot open:") } },
                "no device was opened: \(devices)")
        #expect(!FileManager.default.fileExists(atPath: rig.storeFile), "nothing asked, nothing remembered")

        // Plain `devices` opens nothing, so it needs no consent.
        #expect(try runHark(["devices"], rig: rig).status == 0)

        #expect(try runHark(["permissions", "deny", "microphone"], rig: rig).status == 0)
        let denied = try runHark(["devices", "-v"], rig: rig)
        #expect(denied.status == 77)
        #expect(denied.errorLines.count == 1 && denied.standardError.contains("hark is not allowed to use the microphone"),
                "\(denied.standardError)")
    }

    /// The "ALSA devices:" section of `hark devices` split into devices: a name (two spaces in,
    /// without a "[in use …]" mark), then its lines (six spaces in).
    private func deviceBlocks(_ output: Data) -> [(name: String, lines: [String])] {
        var blocks: [(name: String, lines: [String])] = []
        var inALSASection = false
        for line in String(decoding: output, as: UTF8.self).split(separator: "\n").map(String.init) {
            if !line.hasPrefix(" ") {
                inALSASection = line == "ALSA devices:"
            } else if inALSASection && line.hasPrefix("      ") {
                blocks[blocks.count - 1].lines.append(String(line.dropFirst(6)))
            } else if inALSASection {
                let name = line.dropFirst(2).split(separator: "  [", maxSplits: 1).first.map(String.init) ?? ""
                blocks.append((name, []))
            }
        }
        return blocks
    }
}
