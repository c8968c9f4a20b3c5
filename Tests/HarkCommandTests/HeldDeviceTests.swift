import SoundServer
import Testing
@testable import hark

/// `hark devices` marks an ALSA capture device "in use by the sound server" when one of the
/// server's microphones reads it, and not for a sink's monitor, which carries its sink's card and
/// playback device (until 2026-11-29 the speakers' monitor marked `hw:CARD=PCH,DEV=0` in use).
/// No sound card here: the card's index is given.
@Suite struct HeldDeviceTests {
    static func source(_ name: String, monitor: Bool, card: Int, device: Int) -> SoundServerSource {
        SoundServerSource(name: name, description: name, sampleRate: 48_000, channels: 2, isMonitor: monitor,
                          isDefault: false, alsaCard: card, alsaDevice: device)
    }

    static func pch(_ id: String) -> Int? { id == "PCH" ? 0 : nil }

    @Test func aMicrophoneOnTheDeviceHoldsIt() {
        let sources = [Self.source("alsa_input.pci-0000_00_1f.3.analog-stereo", monitor: false, card: 0, device: 0)]
        #expect(DevicesCommand.isHeld("hw:CARD=PCH,DEV=0", by: sources, cardIndex: Self.pch))
        #expect(DevicesCommand.isHeld("plughw:CARD=PCH,DEV=0", by: sources, cardIndex: Self.pch))
        #expect(!DevicesCommand.isHeld("hw:CARD=PCH,DEV=2", by: sources, cardIndex: Self.pch))
        #expect(!DevicesCommand.isHeld("hw:CARD=USB,DEV=0", by: sources, cardIndex: Self.pch))
    }

    @Test func aSinksMonitorHoldsNoCaptureDevice() {
        let sources = [Self.source("alsa_output.pci-0000_00_1f.3.analog-stereo.monitor", monitor: true, card: 0, device: 0)]
        #expect(!DevicesCommand.isHeld("hw:CARD=PCH,DEV=0", by: sources, cardIndex: Self.pch))
    }
}
