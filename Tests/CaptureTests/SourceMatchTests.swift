import SoundServer
import Testing

/// Which sound-server source `-D` means: a name exactly, else part of a description; a query
/// that fits several is for the user to settle.
@Suite struct SourceMatchTests {
    static func source(_ name: String, _ description: String, monitor: Bool = false) -> SoundServerSource {
        SoundServerSource(name: name, description: description, sampleRate: 48_000, channels: 2, isMonitor: monitor, isDefault: false)
    }

    static let sources = [source("usbmic", "Headset"), source("headset", "USB Mic"), source("usbmic.monitor", "Monitor of Headset", monitor: true)]

    @Test func aNameIsTakenExactly() {
        #expect(SourceMatch("headset", in: Self.sources) == .found(Self.sources[1]))
        #expect(SourceMatch("usbmic", in: Self.sources) == .found(Self.sources[0]))
    }

    @Test func partOfADescriptionFindsTheMicrophoneNotItsMonitor() {
        #expect(SourceMatch("usb", in: Self.sources) == .found(Self.sources[1]))
        #expect(SourceMatch("monitor of", in: Self.sources) == .found(Self.sources[2]))
    }

    /// "Headset" is one source's description and, but for its capital, another's name: which one
    /// was meant is not for hark to guess.
    @Test func aNameButForCaseBesideADescriptionIsAmbiguous() {
        guard case .ambiguous(let candidates) = SourceMatch("Headset", in: Self.sources) else {
            Issue.record("not ambiguous: \(SourceMatch("Headset", in: Self.sources))")
            return
        }
        #expect(Set(candidates.map(\.name)) == ["usbmic", "headset"])
        #expect(SourceMatch("USBMIC", in: [Self.sources[0]]) == .found(Self.sources[0]), "alone, the name but for case")
    }
}
