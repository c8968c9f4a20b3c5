import AudioFormat
import CALSA
import RecordPermission
#if canImport(Glibc)
import Glibc
#endif

/// What a capture device accepts for interleaved capture, read from ALSA's configuration space
/// before any parameter is chosen (`hark devices -v`).
public struct DeviceCapabilities: Sendable, Equatable {
    /// The rates the device's configuration space spans. ALSA gives a range, not a list: a device
    /// may refuse rates inside it, so `commonRates` says which of the usual ones it really takes.
    public let rates: ClosedRange<Int>
    /// Those of `DeviceCapabilities.commonRates` the device accepts.
    public let commonRates: [Int]
    /// hark's sample formats the device accepts, in hark's order.
    public let sampleFormats: [SampleFormat]
    /// Other PCM formats the device accepts (ALSA names such as `S24_3LE`), which hark does not record.
    public let otherFormats: [String]
    public let channels: ClosedRange<Int>
    /// The channel maps the device offers (`snd_pcm_query_chmaps`), each as ALSA names its
    /// positions (`FL,FR,RL,RR,FC,LFE`); empty when it says nothing (then `--channel-map` names
    /// the speakers for surround Opus).
    public let channelMaps: [String]

    /// The rates people ask for, tested one by one.
    public static let commonRates = [8_000, 11_025, 16_000, 22_050, 32_000, 44_100, 48_000, 88_200, 96_000, 176_400, 192_000]

    /// Opens `device` for capture (non-blocking), reads what it accepts and closes it again. No
    /// audio is read and the stream is never started, but opening is the microphone access the
    /// permission gate guards — a plugin such as `pulse` connects to the sound server, a hardware
    /// device is taken from other programs while open — so it needs a grant like any open.
    /// A device that cannot be opened or used is a value (`.unavailable`), never an error.
    /// Not real-time safe. The corresponding C functions are `snd_pcm_open`, `snd_pcm_hw_params_any`
    /// and `snd_pcm_hw_params_test_*`.
    public static func probe(_ device: String, grant: CaptureGrant) -> DeviceProbe {
        grant.requireUsageDescription()
        ALSALibrary.silenceErrorMessages()
        var handle: OpaquePointer?
        let opened = snd_pcm_open(&handle, device, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)
        guard opened >= 0, let handle else { return .unavailable(reason: openFailureReason(code: -opened)) }
        defer { snd_pcm_close(handle) }
        do throws(CaptureOpenError) {
            let parameters = try ALSAHardwareParameters(pcm: handle, device: device)
            return .capabilities(try parameters.capabilities())
        } catch {
            switch error {
            case .unavailable(_, let reason): return .unavailable(reason: reason)
            case .unsupported(_, let parameter, _, _): return .unavailable(reason: "does not support \(parameter)")
            case .notFound: return .unavailable(reason: "no such device")
            case .notCoveredByGrant: return .unavailable(reason: "not covered by the grant")  // sound-server streams only
            }
        }
    }

    /// Short reasons for a listing, one per kind of failure a user can act on.
    private static func openFailureReason(code: Int32) -> String {
        switch code {
        case ENOENT, ENODEV, ENXIO: "no such device"
        case EBUSY: "busy (another program is using it)"
        case EACCES, EPERM: "permission denied"
        case ECONNREFUSED: "its sound server is not running (connection refused)"
        default: String(cString: snd_strerror(-code))
        }
    }
}

/// The outcome of probing one device.
public enum DeviceProbe: Sendable, Equatable {
    case capabilities(DeviceCapabilities)
    /// It could not be opened or used for capture; the reason is short, for a listing.
    case unavailable(reason: String)
}
