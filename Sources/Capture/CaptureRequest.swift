import AudioFormat

/// What the user asks a capture device for. The device may adjust period and buffer sizes;
/// format, channels and rate must be met exactly (ALSA's plug layer converts where it can).
public struct CaptureRequest: Sendable, Equatable {
    /// The device's name as the user sees it, and as ALSA opens it when `route` is `.alsa`.
    public var device: String
    /// Through what the audio comes.
    public var route: CaptureRoute = .alsa
    /// Which speaker each channel should be (`--channel-map`). The sound server mixes its source
    /// into exactly these speakers; an ALSA device delivers its own order, which this only names.
    public var channelLayout: ChannelLayout?
    public var format: PCMFormat
    /// Requested period (the unit the device delivers in), in microseconds.
    public var periodMicroseconds: Int
    /// Requested device buffer, in microseconds. Must exceed the period.
    public var bufferMicroseconds: Int

    /// 125 ms periods in a 500 ms buffer, arecord's defaults. Every period wakes PulseAudio's client
    /// thread, the capture thread and the encoder thread; measured through PulseAudio (30 s paced,
    /// FLAC, 2 runs each) a whole recording takes 0.60% of a core at 125 ms against 0.87–1.2% at
    /// 50 ms (`arecord | flac -5`: 0.43–0.53%). A pipe reader still gets the FLAC header at once
    /// and the first audio frame after one period plus one 4096-sample block. The 500 ms buffer
    /// rides out scheduling hiccups of the capture thread.
    public static let defaultPeriodMicroseconds = 125_000
    public static let defaultBufferMicroseconds = 500_000

    public init(
        device: String, format: PCMFormat,
        periodMicroseconds: Int = CaptureRequest.defaultPeriodMicroseconds,
        bufferMicroseconds: Int = CaptureRequest.defaultBufferMicroseconds
    ) {
        self.device = device
        self.format = format
        self.periodMicroseconds = periodMicroseconds
        self.bufferMicroseconds = bufferMicroseconds
    }
}

/// Through what a recording's audio comes.
public enum CaptureRoute: Sendable, Equatable {
    /// An ALSA PCM, opened by name.
    case alsa
    /// The sound server's own record stream (libpulse; PulseAudio, or PipeWire through its
    /// PulseAudio protocol): `source` by its name, or nil for the server's default source.
    case soundServer(source: String?)
}

/// What the device actually agreed to.
public struct NegotiatedCapture: Sendable, Equatable, CustomStringConvertible {
    public let device: String
    public let format: PCMFormat
    public let periodFrames: Int
    public let bufferFrames: Int
    /// Which speaker each channel is, when the device says (`snd_pcm_get_chmap`) and names every
    /// channel; nil otherwise (no map: many USB devices, ALSA's file and null plugins without a
    /// `chmap`).
    public var channelLayout: ChannelLayout? = nil
    /// The device's own channel map as ALSA names its positions (`FL,FR,FC,LFE,RLC,RRC`), kept
    /// even when `channelLayout` is nil because a position is one hark cannot place (so a refusal
    /// can say which); nil when the device has no map.
    public var deviceChannelMap: String? = nil
    /// Whether the device's status timestamps are on CLOCK_MONOTONIC (set in its software
    /// parameters), so they can be compared with `MonotonicClock`.
    public var hasMonotonicTimestamps = false

    public init(device: String, format: PCMFormat, periodFrames: Int, bufferFrames: Int,
                channelLayout: ChannelLayout? = nil, deviceChannelMap: String? = nil, hasMonotonicTimestamps: Bool = false) {
        self.device = device
        self.format = format
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
        self.channelLayout = channelLayout
        self.deviceChannelMap = deviceChannelMap
        self.hasMonotonicTimestamps = hasMonotonicTimestamps
    }

    public var description: String {
        let rate = Double(format.sampleRate)
        let periodMs = Double(periodFrames) * 1000 / rate
        let bufferMs = Double(bufferFrames) * 1000 / rate
        return "\(format), period \(periodFrames) frames (\(formatMilliseconds(periodMs)) ms), "
            + "buffer \(bufferFrames) frames (\(formatMilliseconds(bufferMs)) ms)"
    }
}

func formatMilliseconds(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}
